"""Executes a plan: for each stack, verify and load every level, judge it, store it."""
