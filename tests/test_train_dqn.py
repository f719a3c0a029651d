"""The masked DQN never picks an illegal action and never bootstraps from one."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from train.sb3.dqn import QNetwork, ReplayBuffer, act, masked_argmax, td_target  # noqa: E402


class FixedQ(QNetwork):
    """A 'network' that returns the same Q-values for every observation."""

    def __init__(self, q: list[float]) -> None:
        super().__init__(1, len(q), [1])
        self.q = torch.tensor(q, dtype=torch.float32)

    def forward(self, obs):
        return self.q.expand(obs.shape[0], -1)


def test_masked_argmax_ignores_a_higher_illegal_value():
    q = torch.tensor([[5.0, 1.0, 2.0, 100.0]])
    mask = torch.tensor([[False, True, True, False]])
    assert masked_argmax(q, mask).item() == 2, "the best legal action, not the best action"


def test_acting_is_always_legal_greedy_or_exploring():
    rng = np.random.default_rng(0)
    net = QNetwork(8, 41, [16])
    for eps in (0.0, 0.5, 1.0):
        for _ in range(50):
            obs = rng.random((4, 8), dtype=np.float32)
            masks = rng.random((4, 41)) < 0.1
            masks[np.arange(4), rng.integers(41, size=4)] = True  # at least one legal action
            actions = act(net, obs, masks, eps, rng)
            assert masks[np.arange(4), actions].all(), f"epsilon {eps} chose an illegal action"
            assert net.greedy_action(obs[0], masks[0]) in np.flatnonzero(masks[0])


@pytest.mark.parametrize("double", [False, True])
def test_target_excludes_illegal_next_actions(double):
    # Action 0 is illegal in the next state and has a huge value: it must not be bootstrapped.
    online = FixedQ([1000.0, 1.0, 3.0])
    target = FixedQ([1000.0, 2.0, 4.0])
    next_mask = torch.tensor([[False, True, True]])
    y = td_target(torch.tensor([0.5]), torch.tensor([0.0]), torch.zeros(1, 1), next_mask, online, target, 0.9, double)
    assert y.item() == pytest.approx(0.5 + 0.9 * 4.0), "max over legal next actions only (action 2)"


@pytest.mark.parametrize("double", [False, True])
def test_terminal_and_maskless_next_states_bootstrap_nothing(double):
    net = FixedQ([7.0, 9.0])
    for done, mask in ((1.0, [True, True]), (0.0, [False, False]), (1.0, [False, False])):
        y = td_target(
            torch.tensor([-1.0]), torch.tensor([done]), torch.zeros(1, 1), torch.tensor([mask]), net, net, 0.99, double
        )
        assert y.item() == pytest.approx(-1.0), f"done={done}, mask={mask}: no bootstrap, no NaN"


def test_double_dqn_uses_online_argmax_and_target_value():
    online = FixedQ([0.0, 5.0, 1.0])  # online prefers action 1
    target = FixedQ([0.0, 2.0, 8.0])  # target would prefer action 2
    mask = torch.tensor([[True, True, True]])
    args = (torch.tensor([0.0]), torch.tensor([0.0]), torch.zeros(1, 1), mask, online, target, 1.0)
    assert td_target(*args, double=True).item() == pytest.approx(2.0)
    assert td_target(*args, double=False).item() == pytest.approx(8.0)


def test_replay_buffer_keeps_the_next_mask_exactly():
    rng = np.random.default_rng(0)
    num_actions = 16200  # the "move" action space
    rb = ReplayBuffer(32, 3, num_actions)
    masks = rng.random((20, num_actions)) < 0.001
    for i in range(20):
        rb.add(np.full(3, i), np.full(3, i + 1), i, float(i), i % 2 == 0, masks[i])
    batch = rb.sample(64, rng)
    for obs, nmask, done in zip(batch["obs"].numpy(), batch["next_mask"].numpy(), batch["dones"].numpy()):
        i = int(obs[0])
        np.testing.assert_array_equal(nmask, masks[i])
        assert done == float(i % 2 == 0)
