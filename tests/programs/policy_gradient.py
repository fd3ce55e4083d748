"""REINFORCE on a toy bandit-with-state, as in RL course notebooks: a policy network, torch.distributions.Categorical
for log-probabilities and entropy, discounted returns normalized with mean and std. Actions are drawn with NumPy
from the policy's probabilities so both runs take the same ones.

Written against PyTorch only. Prints one JSON line per episode ({"step", "loss", "return", "entropy"}); "loss" is
the policy's negative log-likelihood of the best action in each state ("update_loss", the REINFORCE loss with
normalized returns, sums to about zero, so it is not compared).
"""
import json

import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Categorical

rng = np.random.default_rng(21)
policy = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
policy.load_state_dict({k: torch.from_numpy((rng.standard_normal(tuple(v.shape)) * 0.3).astype(np.float32))
                        for k, v in policy.state_dict().items()})
optimizer = torch.optim.Adam(policy.parameters(), lr=2e-2)
gamma, eps = 0.9, np.finfo(np.float32).eps.item()
best_action = np.array([0, 1, 2, 1])  # the rewarding action for each of 4 states
for episode in range(25):
    log_probs, rewards, entropies = [], [], []
    for _t in range(8):
        s = rng.integers(0, 4)
        state = torch.from_numpy(np.eye(4, dtype=np.float32)[s])
        m = Categorical(logits=policy(state))
        p = m.probs.detach().numpy().astype(np.float64)
        action = int(rng.choice(3, p=p / p.sum()))
        log_probs.append(m.log_prob(torch.tensor(action)))
        entropies.append(m.entropy())
        rewards.append(1.0 if action == best_action[s] else 0.0)
    R, returns = 0.0, []
    for r in rewards[::-1]:
        R = r + gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + eps)
    loss = torch.cat([(-lp * ret).unsqueeze(0) for lp, ret in zip(log_probs, returns)]).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    with torch.no_grad():  # how far the policy is from the best action in each state (what REINFORCE improves)
        best_nll = -Categorical(logits=policy(torch.eye(4))).log_prob(torch.from_numpy(best_action)).mean()
    print(json.dumps({"step": episode, "loss": best_nll.item(), "update_loss": loss.item(), "return": sum(rewards),
                      "entropy": torch.stack(entropies).mean().item()}))
