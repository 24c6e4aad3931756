"""The saved-model tests run programs that reseed NumPy's global RandomState
(np.random.seed inside a traced function): restore it after each test, so no other test
sees a state these left behind."""

import numpy as np
import pytest


@pytest.fixture(autouse=True)
def _keep_global_random_state():
    state = np.random.get_state()
    yield
    np.random.set_state(state)
