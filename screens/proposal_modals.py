"""The modals of the Proposals screen: approve (with the choices the checks allow), a y / n
confirmation when there is nothing to choose, reject (the reason is required) and edit (the
candidate's text in a text area). Each says exactly what will change before it does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static, TextArea
from textual.widgets.option_list import Option

from store import ApprovalOption, ProposalInfo
from store import one_line

VERIFY_NOTE = ("Then the write is verified: it reads back, its chunks are in both indexes, "
               "and a search with its own embedding finds it.")


@dataclass(frozen=True)
class ApproveChoice:
    """What the person chose: approve as (None: as proposed), with this reason."""

    as_op: str | None
    reason: str | None


def _memory(info: ProposalInfo, memory_id: int | None) -> str:
    target = next((t for t in info.targets if t.memory_id == memory_id), None)
    name = target.name if target is not None else None
    return f"memory {memory_id}" + (f" '{one_line(name, 50)}'" if name else "")


def approval_effect(info: ProposalInfo, option: ApprovalOption,
                    memory_dir: str | None = None) -> str:
    """What approving ``info`` as ``option`` writes, in a sentence or two."""
    s = info.summary
    name = one_line(s.name or "", 60)
    kind = f"{s.type} memory" if s.type else "memory"
    targets = ", ".join(_memory(info, t) for t in s.targets)
    if option.as_op == "reinforce":
        what = (f"Memory {option.memory_id} gets one more hit and this proposal's evidence; no "
                "new memory is written.")
    elif option.as_op == "supersede":
        what = (f"Writes a new {kind} '{name}'; memory {option.memory_id} becomes superseded "
                "(valid until now) and is linked to it.")
    elif option.as_op == "keep-both":
        what = (f"Writes a new {kind} '{name}'; it and memory {option.memory_id} are flagged "
                "as contradicting each other, and recall's K term penalises both.")
    elif s.op == "add":
        what = f"Writes a new {kind} '{name}' with its evidence, chunks and vectors."
    elif s.op == "revise":
        what = f"Rewrites {targets} with the candidate's text; its chunks are indexed again."
    elif s.op == "supersede":
        what = (f"Writes a new {kind} '{name}'; {targets} becomes superseded (valid until "
                "now) and is linked to it.")
    elif s.op == "merge":
        what = (f"Writes one {kind} '{name}'; {targets} become superseded (valid until now) "
                "and are linked to it.")
    elif s.op == "reinforce":
        what = f"{targets[:1].upper()}{targets[1:]} gets one more hit and this evidence."
    elif s.op == "quarantine":
        what = (f"{targets[:1].upper()}{targets[1:]} becomes quarantined: it stays in the "
                "store but is never recalled.")
    elif s.op == "expire":
        what = (f"{targets[:1].upper()}{targets[1:]} becomes expired (valid until now): it "
                "is kept, with its history, and recalled only by a --historical recall.")
    else:
        what = "Writes nothing: the proposal is marked applied."
    if memory_dir and s.op != "noop":
        what += f" The memory's file in {memory_dir} is written in the same step."
    return f"{what} {VERIFY_NOTE}" if s.op != "noop" or option.as_op else what


def option_label(option: ApprovalOption) -> Text:
    """``as proposed — apply the add as proposed`` (dimmed with the reason when not allowed)."""
    head = option.as_op or "as proposed"
    out = Text(f"{head:<12}", style="bold" if option.allowed else "dim", end="")
    need = " (needs a reason)" if option.allowed and option.needs_reason else ""
    out.append(f"{option.why}{need}" if option.allowed else f"not allowed: {option.why}",
               style="" if option.allowed else "dim")
    return out


class ConfirmModal(ModalScreen[bool]):
    """y / n: a question and exactly what will change."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes", id="confirm-yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm-no"),
    ]

    def __init__(self, title: str, body: str) -> None:
        super().__init__(classes="gov-modal")
        self.box_title = title
        self.body = body

    def compose(self) -> ComposeResult:
        with Vertical(classes="gov-box panel") as box:
            box.border_title = self.box_title
            box.border_subtitle = "y yes · n / esc no"
            yield Static(Text(self.body, end=""), classes="gov-body", markup=False)

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class ApproveModal(ModalScreen[ApproveChoice | None]):
    """Choose how to approve (only what the checks allow can be picked) and give a reason."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="approve-cancel"),
        Binding("ctrl+s", "submit", "Approve", id="approve-submit"),
    ]

    def __init__(self, info: ProposalInfo, memory_dir: str | None = None) -> None:
        super().__init__(classes="gov-modal")
        self.info = info
        self.memory_dir = memory_dir
        self.options = list(info.options)

    def compose(self) -> ComposeResult:
        s = self.info.summary
        with Vertical(classes="gov-box panel") as box:
            box.border_title = f"Approve proposal {s.id}"
            box.border_subtitle = "enter in the reason approves · esc cancels"
            yield Static(Text(f"{s.op} {s.type or ''} '{one_line(s.name or '', 60)}': "
                              "how to approve it (the checks decide what is allowed)",
                              end=""), markup=False)
            yield OptionList(*[Option(option_label(o), id=str(i), disabled=not o.allowed)
                               for i, o in enumerate(self.options)], id="approve-options")
            yield Static("", id="approve-effect", classes="gov-body", markup=False)
            yield Input(id="approve-reason")
            yield Static("", id="approve-error", classes="gov-error", markup=False)

    def on_mount(self) -> None:
        first = next((i for i, o in enumerate(self.options) if o.allowed), None)
        options = self.query_one("#approve-options", OptionList)
        if first is not None:
            options.highlighted = first
        options.focus()
        self._describe()

    def chosen(self) -> ApprovalOption | None:
        index = self.query_one("#approve-options", OptionList).highlighted
        if index is None or not 0 <= index < len(self.options):
            return None
        option = self.options[index]
        return option if option.allowed else None

    @on(OptionList.OptionHighlighted)
    def _highlighted(self) -> None:
        self._describe()

    @on(OptionList.OptionSelected)
    def _selected(self) -> None:
        self.query_one("#approve-reason", Input).focus()

    def _describe(self) -> None:
        option = self.chosen()
        effect = self.query_one("#approve-effect", Static)
        reason = self.query_one("#approve-reason", Input)
        if option is None:
            effect.update(Text("Pick an allowed choice.", style="italic", end=""))
            return
        effect.update(Text(approval_effect(self.info, option, self.memory_dir), end=""))
        reason.placeholder = ("reason (required for this choice)" if option.needs_reason
                              else "reason (optional)")

    @on(Input.Submitted, "#approve-reason")
    def _reason_entered(self) -> None:
        self.action_submit()

    def action_submit(self) -> None:
        option = self.chosen()
        error = self.query_one("#approve-error", Static)
        if option is None:
            error.update("Pick an allowed choice first.")
            return
        reason = self.query_one("#approve-reason", Input).value.strip() or None
        if option.needs_reason and not reason:
            error.update(f"This choice needs a reason: {option.why}.")
            self.query_one("#approve-reason", Input).focus()
            return
        self.dismiss(ApproveChoice(option.as_op, reason))

    def action_cancel(self) -> None:
        self.dismiss(None)


class ReasonModal(ModalScreen[str | None]):
    """Ask for a reason (a rejection needs one); enter submits, esc cancels."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="reason-cancel"),
    ]

    def __init__(self, title: str, body: str, placeholder: str = "reason (required)") -> None:
        super().__init__(classes="gov-modal")
        self.box_title = title
        self.body = body
        self.placeholder = placeholder

    def compose(self) -> ComposeResult:
        with Vertical(classes="gov-box panel") as box:
            box.border_title = self.box_title
            box.border_subtitle = "enter submits · esc cancels"
            yield Static(Text(self.body, end=""), classes="gov-body", markup=False)
            yield Input(placeholder=self.placeholder, id="reason-input")
            yield Static("", id="reason-error", classes="gov-error", markup=False)

    def on_mount(self) -> None:
        self.query_one("#reason-input", Input).focus()

    @on(Input.Submitted, "#reason-input")
    def _submitted(self, event: Input.Submitted) -> None:
        reason = event.value.strip()
        if not reason:
            self.query_one("#reason-error", Static).update("A reason is required.")
            return
        self.dismiss(reason)

    def action_cancel(self) -> None:
        self.dismiss(None)


@dataclass(frozen=True)
class EditResult:
    content: str
    reason: str | None
    name: str | None = None  # a new name; None keeps the one it has

    def changes(self, info: ProposalInfo) -> dict[str, object]:
        """The fields ``Store.edit_proposal`` is given: the text, and the name if renamed."""
        out: dict[str, object] = {}
        if self.content != (info.content or ""):
            out["content"] = self.content
        if self.name is not None:
            out["metadata"] = {"name": self.name}
        return out


class EditModal(ModalScreen[EditResult | None]):
    """Edit a pending proposal's name and text in place; ctrl+s saves (checks run again),
    esc cancels. The name is the memory's name once approved: a text whose first sentence
    was deleted should not keep a name made of it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "Save", id="edit-save"),
        Binding("escape", "cancel", "Cancel", id="edit-cancel"),
    ]

    def __init__(self, info: ProposalInfo) -> None:
        super().__init__(classes="gov-modal")
        self.info = info

    def compose(self) -> ComposeResult:
        s = self.info.summary
        with Vertical(classes="gov-box gov-edit panel") as box:
            box.border_title = f"Edit proposal {s.id}: {s.op} {s.type or ''}"
            box.border_subtitle = "ctrl+s saves · esc cancels"
            yield Static(Text("Saving keeps the change in the proposal's edit history and "
                              "runs every check again; nothing is written to the memories "
                              "until it is approved.", end=""), classes="gov-body",
                         markup=False)
            yield Input(s.name or "", placeholder="name (the memory's name once approved)",
                        id="edit-name")
            yield TextArea(self.info.content or "", id="edit-text", soft_wrap=True,
                           show_line_numbers=False)
            yield Input(placeholder="why (optional, kept with the edit)", id="edit-reason")
            yield Static("", id="edit-error", classes="gov-error", markup=False)

    def on_mount(self) -> None:
        self.query_one("#edit-text", TextArea).focus()

    @on(Input.Submitted, "#edit-reason")
    def _submitted(self) -> None:
        self.action_save()

    def action_save(self) -> None:
        content = self.query_one("#edit-text", TextArea).text
        if not content.strip():
            self.query_one("#edit-error", Static).update("The text cannot be empty.")
            return
        name = self.query_one("#edit-name", Input).value.strip()
        if not name:
            self.query_one("#edit-error", Static).update("The name cannot be empty.")
            return
        renamed = name if name != (self.info.summary.name or "") else None
        if content == (self.info.content or "") and renamed is None:
            self.query_one("#edit-error", Static).update(
                "Nothing changed: edit the name or the text, or esc to cancel.")
            return
        reason = self.query_one("#edit-reason", Input).value.strip() or None
        self.dismiss(EditResult(content, reason, renamed))

    def action_cancel(self) -> None:
        self.dismiss(None)
