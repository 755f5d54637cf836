"""Metrics (SPEC §8): the GenAI client histograms with the semantic conventions' buckets,
runs finished by termination reason, and tool calls by tool and outcome. Labels are
always low-cardinality — names from the config and fixed codes, never a run, tenant or
user id. The meter comes from the provider given to `create_app`, else the global one (a
no-op unless the process configured one)."""

from __future__ import annotations

from collections.abc import Sequence

from opentelemetry import metrics

from app.domain.lifecycle.records import Call
from app.domain.lifecycle.status import SETTLED_CALL_STATUSES
from app.observability import telemetry

# gen-ai-metrics.md, semantic-conventions v1.41.0: ExplicitBucketBoundaries advice.
TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304,
                 16777216, 67108864]  # fmt: skip
DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24,
                    20.48, 40.96, 81.92]  # fmt: skip
BATCH_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256]
WAIT_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.1]
TOKEN_TYPE = "gen_ai.token.type"
CALL_STATUS = "toolgate.call.status"


class Metrics:
    def __init__(self, provider: metrics.MeterProvider | None = None) -> None:
        meter = (provider or metrics.get_meter_provider()).get_meter(telemetry.SCOPE)
        self.token_usage = meter.create_histogram(
            "gen_ai.client.token.usage",
            unit="{token}",
            description="Tokens used per model call, by token type",
            explicit_bucket_boundaries_advisory=TOKEN_BUCKETS,
        )
        self.operation_duration = meter.create_histogram(
            "gen_ai.client.operation.duration",
            unit="s",
            description="Duration of model calls",
            explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
        )
        self.runs_finished = meter.create_counter(
            "toolgate.runs.finished", unit="{run}", description="Runs finished, by reason"
        )
        self.commit_batch_size = meter.create_histogram(
            "toolgate.commit.batch.size",
            unit="{write}",
            description="Step writes committed together in one statement",
            explicit_bucket_boundaries_advisory=BATCH_BUCKETS,
        )
        self.commit_batch_wait = meter.create_histogram(
            "toolgate.commit.batch.wait",
            unit="s",
            description="How long a batch's first step write waited for the batch to be sent",
            explicit_bucket_boundaries_advisory=WAIT_BUCKETS,
        )
        self.tool_calls = meter.create_counter(
            "toolgate.tool.calls",
            unit="{call}",
            description="Tool calls settled, by tool, status and error code",
        )

    def commit_batch(self, size: int, waited_s: float) -> None:
        """A batch of step writes sent (`engine.process.step_writer`): how many writes, and
        how long its first one waited for it to go."""
        self.commit_batch_size.record(size)
        self.commit_batch_wait.record(waited_s)

    def model_call(
        self,
        *,
        provider: str,
        model: str,
        duration_s: float,
        usage: tuple[int, int] | None,
        error_type: str | None = None,
    ) -> None:
        labels: dict[str, str] = {
            telemetry.OPERATION: "chat",
            telemetry.PROVIDER: provider,
            telemetry.REQUEST_MODEL: model,
        }
        if error_type:
            labels[telemetry.ERROR_TYPE] = error_type
        self.operation_duration.record(duration_s, labels)
        if usage is not None:
            for kind, count in zip(("input", "output"), usage, strict=True):
                self.token_usage.record(count, {**labels, TOKEN_TYPE: kind})

    def committed(
        self, agent: str, reason: str | None, calls: Sequence[Call], before: Sequence[Call]
    ) -> None:
        """What a committed step settled: calls that reached a final status in it, and the
        run if it finished. Counted after the commit, so a lost race counts nothing."""
        previous = {c.id: c.status for c in before} if calls else {}
        for call in calls:
            if call.status in SETTLED_CALL_STATUSES and previous.get(call.id) != call.status:
                labels = {telemetry.TOOL: call.tool, CALL_STATUS: call.status.value}
                if call.error is not None:
                    labels[telemetry.ERROR_TYPE] = call.error.code
                self.tool_calls.add(1, labels)
        if reason:
            self.runs_finished.add(1, {telemetry.TERMINATION: reason, telemetry.AGENT: agent})
