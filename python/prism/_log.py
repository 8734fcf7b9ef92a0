"""The C library's log, sent to the standard logging module: logger
"prism". Warnings and errors show by default (Python's last-resort
handler); logging.getLogger("prism").setLevel(logging.INFO) shows more."""
import logging

from . import _prism

logger = logging.getLogger("prism")
# prism_log_level: DEBUG 1, INFO 2, WARNING 3, ERROR 4
_LEVELS = {1: logging.DEBUG, 2: logging.INFO, 3: logging.WARNING, 4: logging.ERROR}


def _forward(level, message):
    logger.log(_LEVELS.get(level, logging.INFO), message)


_prism.set_log_handler(_forward)
