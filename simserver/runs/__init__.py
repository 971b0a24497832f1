"""Runs: the session loop that ties a world to its inputs and outputs, scenario checks and the
end-of-run report."""
