"""`roomspace serve`: a build in a browser for people (pipeline.serve.app), above evaluation, whose sampling,
predictions files, scoring and report it reuses."""
