"""Every change to the database goes through a function in this package."""
