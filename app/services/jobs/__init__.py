"""Background jobs as the services see them: sending a job after the commit, the database's record of
what was sent (for the sweepers), and the state of the queues."""
