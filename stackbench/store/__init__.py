"""The SQLite store: typed records defined once, every level committed as soon as it ends."""
