from tests.autodiff import rules_for_tests  # noqa: F401 (rules the tests need)
