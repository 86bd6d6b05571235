"""The one exception type the command line turns into a one-line message and a non-zero exit."""


class RoomspaceError(ValueError):
    """Bad input or a missing resource, with a message that names it."""
