"""The dated price table that turns operations and messaging units into an estimated cost.

A bundled table (`prices/*.json`, with its source and date) is the default; `--prices FILE`
replaces it. Standard bills a base charge per hour plus operations in monthly tiers; Premium
bills messaging units per hour; Basic bills operations only.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from pairedbus.errors import UserError

BUNDLED_PRICES = Path(__file__).parent / "prices" / "azure-service-bus-usd-2024-09.json"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class OperationTier(_Strict):
    #: Upper bound of the tier in millions of operations per month; None for the last tier.
    up_to_millions: float | None = Field(gt=0)
    price_per_million: float = Field(ge=0)


class BasicPrices(_Strict):
    operations_per_million: float = Field(ge=0)


class StandardPrices(_Strict):
    base_charge_per_hour: float = Field(ge=0)
    base_charge_per_month: float | None = Field(default=None, ge=0)
    operation_tiers_per_month: tuple[OperationTier, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _tiers_ascend_and_end_open(self) -> StandardPrices:
        bounds = [t.up_to_millions for t in self.operation_tiers_per_month]
        if bounds[-1] is not None:
            raise ValueError("the last operation tier must have up_to_millions: null")
        finite = [b for b in bounds[:-1] if b is not None]
        if len(finite) != len(bounds) - 1 or finite != sorted(finite) or len(set(finite)) != len(finite):
            raise ValueError("operation tiers must ascend strictly, only the last one open (null)")
        return self


class PremiumPrices(_Strict):
    messaging_unit_per_hour: float = Field(ge=0)


class SyphonHostingPrices(_Strict):
    """The syphon's hosting: Container Apps (consumption plan, active usage) and Log Analytics.

    Sizes default to the stack config's syphon defaults (`SyphonConfig`); the log volume is an
    assumption (the syphon logs a line per batch and per outage, not per message)."""

    source: str = "https://azure.microsoft.com/en-us/pricing/details/container-apps/"
    vcpu_second: float = Field(ge=0)
    gib_second: float = Field(ge=0)
    log_analytics_per_gb: float = Field(ge=0)
    log_gb_per_day: float = Field(default=0.01, ge=0)
    vcpu: float = Field(default_factory=lambda: _syphon_default("cpu"), gt=0)
    memory_gib: float = Field(default_factory=lambda: float(_syphon_default("memory").removesuffix("Gi")), gt=0)
    replicas: int = Field(default_factory=lambda: _syphon_default("min_replicas"), ge=0)

    def compute_per_day(self) -> float:
        seconds = 86_400 * self.replicas
        return seconds * (self.vcpu * self.vcpu_second + self.memory_gib * self.gib_second)

    def logs_per_day(self) -> float:
        return self.log_gb_per_day * self.log_analytics_per_gb


def _syphon_default(name: str) -> Any:  # a pydantic FieldInfo.default; the price field validates it
    from pairedbus.iac.config import SyphonConfig

    return SyphonConfig.model_fields[name].default


class PriceTable(_Strict):
    source: str = Field(min_length=1)
    as_of: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")
    note: str = ""
    currency: str = Field(min_length=3, max_length=3)
    hours_per_day: int = Field(default=24, ge=1, le=24)
    basic: BasicPrices
    standard: StandardPrices
    premium: PremiumPrices
    syphon_hosting: SyphonHostingPrices | None = None

    def standard_base_per_day(self) -> float:
        return self.standard.base_charge_per_hour * self.hours_per_day

    def premium_base_per_day(self, messaging_units: int) -> float:
        return self.premium.messaging_unit_per_hour * messaging_units * self.hours_per_day

    def tier_bounds(self) -> list[tuple[float, float | None, float]]:
        """(lower, upper, price per operation) for each Standard tier, in operations."""
        lower = 0.0
        out: list[tuple[float, float | None, float]] = []
        for tier in self.standard.operation_tiers_per_month:
            upper = None if tier.up_to_millions is None else tier.up_to_millions * 1_000_000
            out.append((lower, upper, tier.price_per_million / 1_000_000))
            lower = upper if upper is not None else lower
        return out

    def standard_tiered_cost(self, monthly_operations: float) -> float:
        """Cost of a month's operations on Standard (for tests and the report, not the hot path)."""
        total = 0.0
        for lower, upper, price in self.tier_bounds():
            top = monthly_operations if upper is None else min(monthly_operations, upper)
            total += max(0.0, top - lower) * price
        return total


def _bundled_text() -> str:
    """Through importlib.resources: the package may run from a zip (`spark-submit --py-files`)."""
    from importlib.resources import files

    return files("pairedbus.pipeline").joinpath("prices", BUNDLED_PRICES.name).read_text(encoding="utf-8")


def load_prices(path: str | Path | None = None) -> PriceTable:
    """The bundled table, or the one at `path`; a bad file is a one-line UserError."""
    source = Path(path) if path is not None else BUNDLED_PRICES
    try:
        raw = json.loads(source.read_text(encoding="utf-8") if path is not None else _bundled_text())
    except FileNotFoundError:
        raise UserError(f"--prices {source}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"--prices {source}: cannot read ({exc})") from None
    except json.JSONDecodeError as exc:
        raise UserError(f"--prices {source}: not JSON (line {exc.lineno}: {exc.msg})") from None
    try:
        return PriceTable.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise UserError(f"--prices {source}: {where}: {first['msg']}") from None
