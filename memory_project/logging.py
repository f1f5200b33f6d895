"""One JSON object per log line (production): what log shippers parse without a grammar."""

import json
import logging
from datetime import UTC, datetime


class JsonFormatter(logging.Formatter):
    FIELDS = ("request_id", "agent", "job", "run_id", "status_code")

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "process": record.process,
        }
        for name in self.FIELDS:
            if hasattr(record, name):
                entry[name] = getattr(record, name)
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)
