"""CodaLab v1.5 bundles: numbered ``phases``, ``leaderboard: {leaderboards, columns}``, ``html`` pages.

A v1.5 competition becomes one Podium task titled with the competition's title; each phase (in
``phasenumber`` order) becomes a phase titled with its ``label``, ending where the next one starts
(the last one at the competition's ``end_date``, or never).
"""

from __future__ import annotations

from typing import Any

from codalab.bundle import DEFAULT_IMAGE, DEFAULT_TIME_LIMIT, Reader, Translation, slugify, text_of, unique_names

COMPETITION_KEYS = (
    "title",
    "description",
    "html",
    "phases",
    "leaderboard",
    "competition_docker_image",
    "end_date",
    "has_registration",
    "force_submission_to_leaderboard",
    "enable_detailed_results",
)
PHASE_KEYS = (
    "phasenumber",
    "label",
    "description",
    "start_date",
    "execution_time_limit",
    "max_submissions",
    "max_submissions_per_day",
    "force_best_submission_to_leaderboard",
    "starting_kit",
    "public_data",
    "input_data",
    "scoring_program",
    "reference_data",
    "ingestion_program",
    "is_scoring_only",
)
PAGE_TITLES = {"overview": "Overview", "data": "Data", "evaluation": "Evaluation", "terms": "Terms and conditions"}


class V15Reader(Reader):
    kind = "codalab-1.5"

    def translate(self) -> Translation:
        y = self.yaml
        title = y.get("title")
        if not isinstance(title, str) or not title.strip():
            self.problem("title", "a competition needs a title")
            title = "CodaLab competition"
        self.unmapped("", y, (*COMPETITION_KEYS, "admin_names"))
        if y.get("admin_names"):
            self.warn("admin_names: CodaLab accounts are not Podium accounts; add further organizers by hand")
        image = y.get("competition_docker_image") or DEFAULT_IMAGE[self.kind]
        self.result_files: list[list[str]] = []
        metrics = self.columns()
        phases = self.phases()
        options: dict[str, Any] = {"metrics": metrics, "image": image}
        # A starting kit's sample result shows the files a result zip must hold; the phases share one task, so
        # the names apply only where every kit that shows any agrees.
        shown = {tuple(names) for names in self.result_files}
        if len(shown) == 1:
            options["result_files"] = list(next(iter(shown)))
        elif shown:
            self.warn("starting_kit: the phases' sample results name different files; uploads are not checked for them")
        task: dict[str, Any] = {
            "slug": slugify(title, "task"),
            "title": title,
            "scorer": "program",
            "scorer_options": options,
            "phases": phases,
        }
        return self.result(
            {
                "slug": slugify(title, "competition"),
                "title": title,
                "description": self.description(),
                "participation": "approval" if y.get("has_registration") else "open",
                "tasks": [task],
            }
        )

    def description(self) -> str:
        parts = [self.yaml["description"].strip()] if isinstance(self.yaml.get("description"), str) else []
        pages = self.yaml.get("html")
        if isinstance(pages, dict):
            for name, file in pages.items():
                title = PAGE_TITLES.get(str(name).lower(), str(name).replace("_", " ").strip().capitalize())
                section = self.page(file, f"html.{name}", title)
                if section:
                    parts.append(section)
        elif pages is not None:
            self.problem("html", "expected a mapping of page names to files")
        return "\n\n".join(part for part in parts if part)

    def phases(self) -> list[dict[str, Any]]:
        phases = self.yaml.get("phases")
        if not isinstance(phases, dict) or not phases:
            self.problem("phases", "expected numbered phases")
            return []
        ordered = sorted(
            ((key, value) for key, value in phases.items() if isinstance(value, dict)),
            key=lambda kv: (_number(kv[1].get("phasenumber"), kv[0]), str(kv[0])),
        )
        starts = [self.time(value.get("start_date"), f"phases.{key}.start_date") for key, value in ordered]
        end = self.time(self.yaml.get("end_date"), "end_date")
        taken: set[str] = set()
        out = []
        for index, (key, phase) in enumerate(ordered):
            ends_at = starts[index + 1] if index + 1 < len(starts) else end
            translated = self.phase(phase, f"phases.{key}", starts[index], ends_at, taken)
            if translated is not None:
                out.append(translated)
        return out

    def phase(
        self, p: dict[str, Any], where: str, starts_at: str | None, ends_at: str | None, taken: set[str]
    ) -> dict[str, Any] | None:
        self.unmapped(where, p, PHASE_KEYS)
        label = text_of(p.get("label"), where)
        slug = slugify(label, "phase")
        while slug in taken:
            slug = f"{slug[:60]}-{len(taken) + 1}"
        taken.add(slug)
        gold = self.path(p.get("reference_data"), f"{where}.reference_data")
        program = self.program(p.get("scoring_program"), f"{where}.scoring_program")
        secret = [gold] if gold is not None else []
        ingestion = p.get("ingestion_program") is not None
        # With an ingestion program, the input data is what it reads: hidden inputs, never published.
        shown = ("starting_kit", "public_data") if ingestion else ("starting_kit", "public_data", "input_data")
        published = {name: self.public(p[name], f"{where}.{name}", secret) for name in shown if p.get(name) is not None}
        public = [entry for entry in published.values() if entry is not None]
        kit = published.get("starting_kit")
        if kit is not None and (names := self.sample_results(self.folder / kit["path"])):
            self.result_files.append(names)
        if p.get("auto_migration"):
            self.warn(f"{where}.auto_migration: submissions are not carried over from the previous phase")
        force_best = p.get("force_best_submission_to_leaderboard")
        selection = "best" if force_best else "latest" if self.yaml.get("force_submission_to_leaderboard") else "chosen"
        limit = p.get("execution_time_limit")
        out: dict[str, Any] = {
            "slug": slug,
            "title": label,
            "description": p.get("description") if isinstance(p.get("description"), str) else "",
            "starts_at": starts_at,
            "ends_at": ends_at,
            "daily_limit": self.limit(p.get("max_submissions_per_day"), f"{where}.max_submissions_per_day"),
            "total_limit": self.limit(p.get("max_submissions"), f"{where}.max_submissions"),
            "selection": selection,
            "public_files": unique_names(public),
            "time_limit": self.limit(limit, f"{where}.execution_time_limit") or DEFAULT_TIME_LIMIT,
        }
        if ingestion:
            program_entry = self.program(p["ingestion_program"], f"{where}.ingestion_program", "ingestion program")
            if program_entry is not None:
                out["ingestion_program"] = program_entry
            data = self.path(p["input_data"], f"{where}.input_data") if p.get("input_data") is not None else None
            if data is not None:
                out["input_data"] = self.entry(data)
        if gold is None or program is None:
            if p.get("reference_data") is None:
                self.problem(f"{where}.reference_data", "a phase needs reference data for its scoring program")
            if p.get("scoring_program") is None:
                self.problem(f"{where}.scoring_program", "a phase needs a scoring program")
            return None
        return {**out, "gold": self.entry(gold), "program": program}

    def columns(self) -> list[dict[str, Any]]:
        board = self.yaml.get("leaderboard")
        columns = board.get("columns") if isinstance(board, dict) else None
        if not isinstance(columns, dict) or not columns:
            self.problem("leaderboard.columns", "expected the leaderboard's columns")
            return []
        boards = board.get("leaderboards") if isinstance(board, dict) else None
        boards = boards if isinstance(boards, dict) else {}
        if len(boards) > 1:
            self.warn(
                "leaderboard.leaderboards: Podium shows one leaderboard per phase; "
                f"the columns of all {len(boards)} leaderboards are its metrics"
            )
        ordered = sorted(
            ((key, value) for key, value in columns.items() if isinstance(value, dict)),
            key=lambda kv: _number(kv[1].get("rank"), 1),
        )
        metrics = []
        for key, column in ordered:
            where = f"leaderboard.columns.{key}"
            self.unmapped(where, column, ("leaderboard", "label", "rank", "sort", "sorting", "numeric_format"))
            sorting = column.get("sort", column.get("sorting"))
            metric = self.metric(str(key), column.get("label"), sorting, column.get("numeric_format"), where)
            if metric is not None:
                metrics.append(metric)
        return metrics


def _number(value: Any, fallback: Any) -> float:
    for candidate in (value, fallback):
        try:
            return float(candidate)
        except (TypeError, ValueError):
            continue
    return float("inf")
