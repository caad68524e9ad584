"""The loss names tests are parametrized over: every example spelling of the core's loss
registry (`_core.LOSSES`, rust/oracle/registry.rs) and its shared-slack combinations, so that a
new loss is covered as soon as it is registered."""

from svmmap import _core

LOSSES = [name for info in _core.LOSSES for name in info["examples"]] + [
    f"max({','.join(parts)})" for parts in _core.LOSS_COMBINATION_EXAMPLES
]


def available_losses() -> list:
    return list(LOSSES)
