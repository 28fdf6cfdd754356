"""Parsing suites and stack manifests into typed frozen records; pure: no processes, no writes."""
