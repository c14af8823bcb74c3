"""The command's own standard streams, guarded: a reader that closes stdout or stderr early (`hweval ... | head`,
`hweval run 2>&1 | head`) does not stop the command, which goes on and ends with its own status (flows/cli.py's
`entry`)."""

from __future__ import annotations

import os


class ReaderGone:
    """sys.stdout (or sys.stderr) of the command's own process: once its reader has closed it (`hweval ... | head`),
    later writes go nowhere instead of raising BrokenPipeError, so the command goes on (a run still records itself and
    prints its failure lines on stderr) and its status is its own; `gone` says it happened."""

    def __init__(self, stream):
        self._stream, self.gone = stream, False

    def write(self, text: str) -> int:
        if not self.gone:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._went()
        return len(text)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if not self.gone:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._went()

    def _went(self) -> None:
        # stdout's descriptor on /dev/null: what the stream still holds is written there at exit, not raised again
        # (Python's signal docs)
        self.gone = True
        os.dup2(os.open(os.devnull, os.O_WRONLY), self._stream.fileno())

    def __getattr__(self, name: str):
        return getattr(self._stream, name)
