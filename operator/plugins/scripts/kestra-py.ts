// Source of the small `kestra` Python module given to python script tasks: it prints Kestra protocol lines
// (`::{"outputs":...}::`, metrics, logs) the same way the official `kestra` pip package does.
export const KESTRA_PY = `import json
import logging
import time


class Kestra:
    @staticmethod
    def _send(payload):
        print("::" + json.dumps(payload, default=str) + "::", flush=True)

    @staticmethod
    def _metrics(name, type_, value, tags=None):
        Kestra._send({"metrics": [{"name": name, "type": type_, "value": value, "tags": tags or {}}]})

    @staticmethod
    def outputs(map_):
        Kestra._send({"outputs": map_})

    @staticmethod
    def counter(name, value, tags=None):
        Kestra._metrics(name, "counter", value, tags)

    @staticmethod
    def timer(name, duration, tags=None):
        if callable(duration):
            start = time.perf_counter()
            duration()
            Kestra._metrics(name, "timer", time.perf_counter() - start, tags)
        else:
            Kestra._metrics(name, "timer", duration, tags)

    @staticmethod
    def logger():
        logger = logging.getLogger("Kestra")
        logger.setLevel(logging.DEBUG)
        if not any(isinstance(h, _KestraHandler) for h in logger.handlers):
            logger.addHandler(_KestraHandler())
        logger.propagate = False
        return logger


class _KestraHandler(logging.Handler):
    _LEVELS = {"WARNING": "WARN", "CRITICAL": "ERROR", "FATAL": "ERROR", "NOTSET": "INFO"}

    def emit(self, record):
        level = self._LEVELS.get(record.levelname, record.levelname)
        Kestra._send({"logs": [{"level": level, "message": self.format(record)}]})
`;
