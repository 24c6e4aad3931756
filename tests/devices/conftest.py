"""Fixtures for the device tests: a clean registry per test, and the devices to compare."""

import pytest

from autograph.runtime import devices as registry


@pytest.fixture
def clean_registry(monkeypatch):
    """Let a test register, unregister and break devices; restore the registry after it."""
    saved = (dict(registry._DEVICES), dict(registry._MISSING), registry._entry_points_loaded)
    yield registry
    registry._DEVICES.clear()
    registry._DEVICES.update(saved[0])
    registry._MISSING.clear()
    registry._MISSING.update(saved[1])
    registry._entry_points_loaded = saved[2]
    registry._by_type.clear()


def available(name):
    try:
        registry.get_device(name)
        return True
    except registry.DeviceUnavailable:
        return False
