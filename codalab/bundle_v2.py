"""Codabench v2 bundles (``version: 2``): ``tasks``, ``phases``, ``leaderboards``, ``pages``.

Each Codabench task becomes a Podium task titled with the task's ``name``; each phase becomes a phase
of every task it lists, titled with the phase's ``name``. The columns of the leaderboards, in
``index`` order, are every task's metrics; a column computed as ``avg_rank`` (Codabench's mean of fractional ranks
over other columns) is not a metric but a further board of every phase, ranked by ``mean_of_ranks``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from codalab.bundle import DEFAULT_IMAGE, DEFAULT_TIME_LIMIT, Reader, Translation, slugify, text_of, unique_names

COMPETITION_KEYS = (
    "version",
    "title",
    "description",
    "pages",
    "terms",
    "tasks",
    "phases",
    "leaderboards",
    "docker_image",
    "registration_auto_approve",
    "enable_detailed_results",
    "solutions",
)
TASK_KEYS = ("index", "name", "description", "input_data", "reference_data", "scoring_program", "ingestion_program")
PHASE_KEYS = (
    "index",
    "name",
    "description",
    "start",
    "end",
    "tasks",
    "max_submissions",
    "max_submissions_per_day",
    "execution_time_limit_ms",
    "public_data",
    "starting_kit",
)


class V2Reader(Reader):
    kind = "codabench-2"

    def __init__(self, folder: Path, document: dict[str, Any]) -> None:
        super().__init__(folder, document)
        #: Further boards from the columns computed as ``avg_rank`` (``rank_board``), given to every phase.
        self.rank_boards: list[dict[str, Any]] = []

    def translate(self) -> Translation:
        y = self.yaml
        title = y.get("title")
        if not isinstance(title, str) or not title.strip():
            self.problem("title", "a competition needs a title")
            title = "Codabench competition"
        self.unmapped("", y, COMPETITION_KEYS)
        if y.get("solutions"):
            self.warn("solutions: the sample solutions are not imported (submit them to the phases as code)")
        options = {"metrics": self.columns(), "image": y.get("docker_image") or DEFAULT_IMAGE[self.kind]}
        tasks = self.tasks(options)
        return self.result(
            {
                "slug": slugify(title, "competition"),
                "title": title,
                "description": self.description(),
                "participation": "open" if y.get("registration_auto_approve") else "approval",
                "tasks": tasks,
            }
        )

    def description(self) -> str:
        y = self.yaml
        parts = [y["description"].strip()] if isinstance(y.get("description"), str) else []
        pages = y.get("pages") or []
        if not isinstance(pages, list):
            self.problem("pages", "expected a list of pages")
            pages = []
        for i, page in enumerate(pages):
            if not isinstance(page, dict):
                self.problem(f"pages[{i}]", "expected a page with a title and a file")
                continue
            section = self.page(page.get("file"), f"pages[{i}].file", str(page.get("title") or f"Page {i + 1}"))
            if section:
                parts.append(section)
        if y.get("terms") is not None:
            section = self.page(y["terms"], "terms", "Terms and conditions")
            if section:
                parts.append(section)
        return "\n\n".join(parts)

    def tasks(self, options: dict[str, Any]) -> list[dict[str, Any]]:
        tasks = self.yaml.get("tasks")
        if not isinstance(tasks, list) or not tasks:
            self.problem("tasks", "expected a list of tasks")
            return []
        phases = self.yaml.get("phases")
        if not isinstance(phases, list) or not phases:
            self.problem("phases", "expected a list of phases")
            phases = []
        ordered = sorted(
            ((i, p) for i, p in enumerate(phases) if isinstance(p, dict)), key=lambda ip: (_index(ip[1]), ip[0])
        )
        for i, phase in ordered:
            self.unmapped(f"phases[{i}]", phase, PHASE_KEYS)
        out, slugs = [], set()
        for t, task in enumerate(tasks):
            where = f"tasks[{t}]"
            if not isinstance(task, dict):
                self.problem(where, "expected a task")
                continue
            self.unmapped(where, task, TASK_KEYS)
            if "key" in task:
                self.problem(f"{where}.key", "names a task stored on a Codabench server; include its files instead")
                continue
            name = text_of(task.get("name"), f"Task {t + 1}")
            slug = slugify(name, f"task-{t + 1}")
            while slug in slugs:
                slug = f"{slug[:60]}-{t + 1}"
            slugs.add(slug)
            listed = [(i, p) for i, p in ordered if task.get("index") in (p.get("tasks") or [])]
            if not listed:
                self.warn(f"{where}: no phase lists this task, so it is not imported")
                continue
            out.append(
                {
                    "slug": slug,
                    "title": name,
                    "description": task.get("description") if isinstance(task.get("description"), str) else "",
                    "scorer": "program",
                    "scorer_options": dict(options),
                    "phases": self.task_phases(task, where, listed),
                }
            )
        listed_tasks = {index for _, p in ordered for index in (p.get("tasks") or [])}
        for index in sorted(listed_tasks - {t.get("index") for t in tasks if isinstance(t, dict)}, key=str):
            self.problem("phases", f"a phase lists task {index!r}, which the bundle does not define")
        return out

    def task_phases(self, task: dict[str, Any], where: str, listed: list[tuple[int, dict[str, Any]]]) -> list[Any]:
        gold = self.path(task.get("reference_data"), f"{where}.reference_data")
        program = self.program(task.get("scoring_program"), f"{where}.scoring_program")
        secret = [gold] if gold is not None else []
        ingestion = task.get("ingestion_program")
        ingestion_entry = data_entry = None
        # With an ingestion program, the input data is what it reads: hidden inputs, never published.
        task_public = [] if ingestion is not None else [("input_data", f"{where}.input_data", task.get("input_data"))]
        if ingestion is not None:
            ingestion_entry = self.program(ingestion, f"{where}.ingestion_program", "ingestion program")
            if task.get("input_data") is not None:
                path = self.path(task["input_data"], f"{where}.input_data")
                data_entry = self.entry(path) if path is not None else None
        out, taken = [], set()
        for i, p in listed:
            at = f"phases[{i}]"
            name = text_of(p.get("name"), f"Phase {i + 1}")
            slug = slugify(name, f"phase-{i + 1}")
            while slug in taken:
                slug = f"{slug[:60]}-{i + 1}"
            taken.add(slug)
            sources = [*task_public, *((k, f"{at}.{k}", p.get(k)) for k in ("public_data", "starting_kit"))]
            public = [
                entry
                for _, key, value in sources
                if value is not None
                for entry in [self.public(value, key, secret)]
                if entry is not None
            ]
            limit_ms = self.limit(p.get("execution_time_limit_ms"), f"{at}.execution_time_limit_ms")
            phase: dict[str, Any] = {
                "slug": slug,
                "title": name,
                "description": p.get("description") if isinstance(p.get("description"), str) else "",
                "starts_at": self.time(p.get("start"), f"{at}.start"),
                "ends_at": self.time(p.get("end"), f"{at}.end"),
                "daily_limit": self.limit(p.get("max_submissions_per_day"), f"{at}.max_submissions_per_day"),
                "total_limit": self.limit(p.get("max_submissions"), f"{at}.max_submissions"),
                "public_files": unique_names(public),
                "time_limit": max(1, -(-limit_ms // 1000)) if limit_ms else DEFAULT_TIME_LIMIT,
            }
            if self.rank_boards:
                phase["boards"] = [dict(board) for board in self.rank_boards]
            if ingestion_entry is not None:
                phase["ingestion_program"] = ingestion_entry
                if data_entry is not None:
                    phase["input_data"] = data_entry
            if gold is not None and program is not None:
                out.append({**phase, "gold": self.entry(gold), "program": program})
        if task.get("reference_data") is None:
            self.problem(f"{where}.reference_data", "a task needs reference data for its scoring program")
        if task.get("scoring_program") is None:
            self.problem(f"{where}.scoring_program", "a task needs a scoring program")
        return out

    def columns(self) -> list[dict[str, Any]]:
        boards = self.yaml.get("leaderboards")
        if not isinstance(boards, list) or not boards:
            self.problem("leaderboards", "expected a list of leaderboards with columns")
            return []
        if len(boards) > 1:
            self.warn(
                f"leaderboards: Podium shows one leaderboard per phase; the columns of all {len(boards)} "
                "leaderboards are its metrics"
            )
        metrics, keys = [], set()
        self.rank_boards = []
        for b, board in enumerate(boards):
            columns = board.get("columns") if isinstance(board, dict) else None
            if not isinstance(columns, list) or not columns:
                self.problem(f"leaderboards[{b}].columns", "expected a list of columns")
                continue
            self.unmapped(f"leaderboards[{b}]", board, ("title", "key", "columns"))
            ordered = sorted(
                ((c, col) for c, col in enumerate(columns) if isinstance(col, dict)),
                key=lambda cc: (_index(cc[1]), cc[0]),
            )
            by_index = {col.get("index"): col.get("key") for _, col in ordered if col.get("computation") is None}
            for c, column in ordered:
                where = f"leaderboards[{b}].columns[{c}]"
                if column.get("computation") == "avg_rank":
                    self.rank_board(column, by_index, where)
                    continue
                self.unmapped(where, column, ("title", "key", "index", "sorting", "precision"))
                metric = self.metric(
                    column.get("key"), column.get("title"), column.get("sorting"), column.get("precision"), where
                )
                if metric is None:
                    continue
                if metric["key"] in keys:
                    self.problem(where, f"the column key {metric['key']!r} is used twice")
                    continue
                keys.add(metric["key"])
                metrics.append(metric)
        return metrics

    def rank_board(self, column: dict[str, Any], by_index: dict[Any, Any], where: str) -> None:
        """A column computed as Codabench's ``avg_rank`` (the mean of fractional ranks over the columns of its
        ``computation_indexes``) as a further board ranked by ``mean_of_ranks``: the same ranking, on a page of its
        own, since a program's scores carry no such value."""
        self.unmapped(
            where, column, ("title", "key", "index", "sorting", "precision", "computation", "computation_indexes")
        )
        indexes = column.get("computation_indexes")
        if isinstance(indexes, str):
            indexes = [part.strip() for part in indexes.split(",") if part.strip()]
        if not isinstance(indexes, list) or not indexes:
            self.problem(f"{where}.computation_indexes", "an avg_rank column needs the indexes of the columns it ranks")
            return
        named = [by_index.get(int(i)) if str(i).isdigit() else None for i in indexes]
        if not all(isinstance(n, str) for n in named):
            self.problem(
                f"{where}.computation_indexes", f"expected indexes of this leaderboard's columns, found {indexes!r}"
            )
            return
        key = column.get("key")
        key = key if isinstance(key, str) and key.strip() else "average-rank"
        title = column.get("title")
        name = slugify(key, "average-rank")[:40].strip("-")
        self.rank_boards.append(
            {
                "name": name,
                "title": title if isinstance(title, str) and title.strip() else key,
                "metrics": named,
                "ranking": "mean_of_ranks",
            }
        )


def _index(item: dict[str, Any]) -> float:
    value = item.get("index")
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else float("inf")
