"""Failures a user can fix. The command line shows their message as one line, exit status 2."""


class UserError(Exception):
    """Bad input, a missing collection, an unreachable or misconfigured service."""


class RunStopped(UserError):
    """A research run stopped part way (its model endpoint failed); the steps it finished are
    saved under `thread_id`, and resuming that thread continues from them."""

    def __init__(self, reason: str, thread_id: str) -> None:
        super().__init__(f"{reason}; the finished steps are saved in thread {thread_id}")
        self.reason = reason
        self.thread_id = thread_id
