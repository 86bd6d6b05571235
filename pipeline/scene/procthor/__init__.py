"""The adapters around ProcTHOR and AI2-THOR: seeded sampling with its door stage and run-time patches,
the offline stand-in for the Unity controller, the real one, ProcTHOR-10K, and `fast_procthor`'s exact
replacements of ProcTHOR's slow spots. The project's own scene model stays in pipeline.scene."""
