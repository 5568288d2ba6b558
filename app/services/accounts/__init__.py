"""Accounts: users and their credentials, teams, who may do what, and login throttling."""
