"""Test-only code, kept out of the stages (an import-linter contract): the python-constraint2 oracle and synthetic rooms."""
