"""The census of PyTorch's surface (tools/torch_census.py) stays true: coverage never drops, the table is current.

The census is recomputed in this process (about two seconds) and compared, module by module, with the committed
``tests/torch_census/coverage.json``. A name that was present and is gone fails, naming it; so does a name whose
parameters matched torch's and no longer do. A name newly implemented fails too, until the table is rewritten with
``python tools/torch_census.py --write``: the committed table is the project's account of its coverage.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

TOOLS = Path(__file__).resolve().parents[1] / "tools"
sys.path.insert(0, str(TOOLS))

import torch_census  # noqa: E402

REWRITE = "re-run `python tools/torch_census.py --write` and commit tests/torch_census/"
COMMITTED = json.loads(torch_census.JSON_PATH.read_text())

if torch.__version__.split("+")[0] != COMMITTED["torch_version"]:
    pytest.skip(f"the census was taken on torch {COMMITTED['torch_version']}, this is torch {torch.__version__}",
                allow_module_level=True)


@pytest.fixture(scope="module")
def fresh() -> dict:
    """Today's census, in the committed JSON's form."""
    return torch_census.as_json(torch_census.census(), torch_census.not_implemented())["modules"]


def test_every_module_of_the_issue_is_censused():
    assert list(COMMITTED["modules"]) == list(torch_census.MODULES), f"the module list changed: {REWRITE}"


@pytest.mark.parametrize("module", torch_census.MODULES)
def test_coverage_does_not_drop_and_the_table_is_current(fresh, module):
    now, then = fresh[module], COMMITTED["modules"][module]
    torch_names_now = set(now["present"]) | set(now["missing"])
    assert torch_names_now == set(then["present"]) | set(then["missing"]), (
        f"{module}: torch's names differ from the committed census: {REWRITE}")
    lost = sorted(set(then["present"]) - set(now["present"]))
    assert not lost, f"{module}: names tinygrad_like had and no longer has: {', '.join(lost)}"
    newly_mismatched = sorted(set(now["mismatched"]) - set(then["mismatched"]) - set(lost))
    assert not newly_mismatched, (
        f"{module}: names whose parameters matched torch's and no longer do: {', '.join(newly_mismatched)} "
        f"(see `python tools/torch_census.py --mismatches {module}`)")
    gained = sorted(set(now["present"]) - set(then["present"]))
    assert not gained, f"{module}: newly implemented, not yet in the table: {', '.join(gained)}; {REWRITE}"
    mended = sorted(set(then["mismatched"]) - set(now["mismatched"]))
    assert not mended, f"{module}: parameters now match torch's, not yet in the table: {', '.join(mended)}; {REWRITE}"
    assert now == then, f"{module}: the census differs from the committed one: {REWRITE}"


def test_the_committed_table_is_the_committed_census():
    assert torch_census.TABLE_PATH.read_text() == torch_census.render_table(COMMITTED), (
        f"tests/torch_census/coverage.md does not match coverage.json: {REWRITE}")


def test_every_name_listed_as_not_implemented_is_a_missing_torch_name(fresh):
    reasons = torch_census.not_implemented()
    assert "| module | name | reason |" in torch_census.REASONS_PATH.read_text(), "the reasons table lost its header"
    for (module, name), reason in reasons.items():
        assert module in fresh, f"not_implemented.md names an unknown module {module!r}"
        entry = fresh[module]
        assert name in entry["present"] or name in entry["missing"], f"{module}.{name} is not one of torch's names"
        assert name not in entry["present"], f"{module}.{name} is implemented now: take it out of not_implemented.md"
        assert reason, f"{module}.{name} is listed without a reason"


def test_the_census_knows_the_mark_of_names_that_only_raise():
    from tinygrad_like import unsupported

    assert torch_census.UNSUPPORTED_MARK == unsupported.MARK
    probe = unsupported.unsupported_function("torch.probe", "a reason")
    assert unsupported.is_unsupported(probe) and getattr(probe, torch_census.UNSUPPORTED_MARK) == "a reason"


def test_the_census_reads_signatures_and_finds_gaps():
    """The rule is the script's docstring's: checked on names whose answer is known without the census."""
    sample = torch_census.census_of("torch.nn.utils.rnn")
    assert "pad_sequence" in sample.present  # (tinygrad_like.nn.utils.rnn defines it)
    assert torch_census.parameter_names(lambda self, a, b=1, *c, **d: None) == ("a", "b", "c", "d")
    assert torch_census.parameter_names(len) == ("obj",)
    names = torch_census.torch_public_names("torch.nn.functional")
    assert "relu" in names and "math" not in names and "Optional" not in names and "reproducibility_notes" not in names
