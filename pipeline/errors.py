"""The one exception type the command line turns into a one-line message and a non-zero exit."""


class RoomspaceError(ValueError):
    """Bad input or a missing resource, with a message that names it."""


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main process like SIGINT's KeyboardInterrupt, so that a run stops the same way."""
