"""Checks that every stack does exactly the same work before it is measured."""
