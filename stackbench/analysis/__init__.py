"""Statistics and findings computed from stored runs; pure functions."""
