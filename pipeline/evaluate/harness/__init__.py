"""Tasks for the evaluation harnesses researchers use: lm-evaluation-harness and inspect_ai."""
