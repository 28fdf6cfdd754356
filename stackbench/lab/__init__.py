"""The machine side: stacks built, started, watched and stopped; CPU placement; monitoring."""
