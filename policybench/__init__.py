"""The policy benchmark (`make bench-policies`): a fast engine for notebook 03's step model, policies, the grid and the TODO 5 judge."""
