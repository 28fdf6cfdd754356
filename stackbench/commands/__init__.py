"""The CLI commands: thin layers that call the pipeline and print its results."""
