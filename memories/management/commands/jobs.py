"""`manage.py jobs list` / `manage.py jobs run NAME [--agent SLUG] [--max-seconds N] [--queue]`."""

from celery import current_app
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from memories.errors import NotFound
from memories.jobs import JOB_TASK, job_get, jobs_all
from memories.jobs.runner import JobFailed, job_run
from memories.management.options import agent_option
from memories.models import PipelineRun, RunKind


class Command(BaseCommand):
    help = "List the background jobs, or run one now (traced as a PipelineRun of kind 'job')."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        sub.add_parser("list", help="every job with its schedule, switch and last run")
        run = sub.add_parser("run", help="run one job now, in this process")
        run.add_argument("name")
        run.add_argument("--agent", help="slug of the one agent to process")
        run.add_argument("--max-seconds", type=float, help="time budget (default ANAMNESIS_JOB_MAX_SECONDS)")
        run.add_argument("--queue", action="store_true", help="queue it for a worker instead of running it here")

    def handle(self, *args, **opts):
        if opts["action"] == "list":
            return self._list()
        try:
            job_get(opts["name"])
        except NotFound as exc:
            raise CommandError(f"{exc.message}; known: {', '.join(j.name for j in jobs_all())}") from exc
        agent = agent_option(opts.get("agent"))
        if opts["queue"]:
            current_app.send_task(JOB_TASK, args=[opts["name"]], kwargs={"agent_slug": agent.slug if agent else None})
            self.stdout.write(f"queued {opts['name']}")
            return
        try:
            run = job_run(name=opts["name"], agent=agent, max_seconds=opts.get("max_seconds"))
        except JobFailed as exc:
            raise CommandError(str(exc)) from exc
        result = run.result
        self.stdout.write(f"{run.name}: run {run.id} {run.status} in {run.duration_ms:.0f} ms; "
                          f"agents done {len(result['agents_done'])}, skipped {len(result['agents_skipped'])}, "
                          f"left {len(result['agents_left'])}; {result['counts']}")

    def _list(self):
        last = {}
        for run in PipelineRun.objects.filter(kind=RunKind.JOB).order_by("name", "-created_at").distinct("name"):
            last[run.name] = run
        for job in jobs_all():
            state = "on" if job.enabled else "off"
            run = last.get(job.name)
            seen = (f"last run {run.id} {run.status} {timezone.localtime(run.created_at):%Y-%m-%d %H:%M}"
                    if run else "never run")
            scope = "per agent" if job.per_agent else "global"
            self.stdout.write(f"{job.name:22} {state:3} every {job.schedule_seconds:>7.0f}s  {scope:9}  {seen}\n"
                              f"{'':22} {job.description}")
