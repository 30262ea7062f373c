# SPDX-License-Identifier: Apache-2.0
"""The compat tests use the integration tier's broker fixtures (tests/integration/
conftest.py), loaded under another module name so both tiers can run together, and its
report hook, which under CI=true turns a skip for a missing tool (node/npm) or missing
root into a failure."""
import importlib.util
import os
import sys

_INTEGRATION = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration")
sys.path.insert(0, _INTEGRATION)

_spec = importlib.util.spec_from_file_location("tally_integration_conftest",
                                               os.path.join(_INTEGRATION, "conftest.py"))
_fixtures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_fixtures)

pytest_runtest_makereport = _fixtures.pytest_runtest_makereport
broker_factory = _fixtures.broker_factory
broker = _fixtures.broker
shared_broker = _fixtures.shared_broker
