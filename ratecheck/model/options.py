"""Options written as 'kind' or 'kind:N' on the command line and in stored configurations."""

from __future__ import annotations

from typing import Any, ClassVar


class KindOption:
    """Mixin for a frozen dataclass whose first two fields are (kind, count).

    ``parse`` accepts an instance, a dict of fields, or a string 'kind' / 'kind:N'
    (e.g. 'with_replacement:8', 'constant:2'); ``str()`` writes the same string back.
    """

    label: ClassVar[str] = "option"
    example: ClassVar[str] = "kind:1"
    default_count: ClassVar[Any] = None

    @classmethod
    def parse(cls: Any, value: Any) -> Any:  # cls: a dataclass subclass (Participation, DelaySchedule)
        if isinstance(value, cls):
            return value
        if isinstance(value, dict):
            import dataclasses

            fields = [f.name for f in dataclasses.fields(cls)]
            unknown = sorted(set(value) - set(fields), key=str)
            if unknown:
                raise ValueError(f"{cls.label}: unknown field(s) {unknown}; fields: {fields}")
            return cls(**value)
        if isinstance(value, str):
            kind, _, count = value.partition(":")
            if not count:
                return cls(kind, cls.default_count)
            try:
                return cls(kind, int(count))
            except ValueError as exc:
                if count.strip().lstrip("-").isdigit():
                    raise  # the class's own rule (e.g. m >= 1) says it better
                raise ValueError(f"{cls.label}: {count!r} after ':' must be an integer") from exc
        raise ValueError(f"{cls.label} must be a string like {cls.example!r}, got {value!r}")
