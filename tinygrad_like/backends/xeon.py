"""``tl.backends.xeon``: PyTorch's launcher for Intel Xeon (``python -m torch.backends.xeon.run_cpu``) pins a
program to cores and NUMA nodes. Not needed here: run the program itself."""
