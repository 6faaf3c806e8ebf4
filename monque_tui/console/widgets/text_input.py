"""The console's text field: its own editing keys run in order with the characters around them.

Textual's ``Input`` inserts a printable key in its own key handler, but its editing keys
(Backspace, ``ctrl+u``, ``ctrl+w``, the arrows, Enter) are bindings, run only when the key
has bubbled back up to the app. Keys that arrive in one read (a slow ssh link batches them,
as at 3 a.m. on call; a paste of keys) are each handed to the field before the bubbled one
comes back, so the binding runs after the characters typed behind it: ``/`` then ``ctrl+u``
then ``zzz`` left the name field empty, and ``abc`` Backspace ``d`` read ``abc`` (console
probe; upstream Textual issue #6605). Here the field runs its own non-priority bindings in
its key handler, in order, as the open upstream fix (#6631) does; a priority binding was
already tried before the key reached the field, and every other key goes on as before.

Tab is the app's binding (focus the next widget), with the same fault: the characters typed
after it went on into this field. The field moves the focus itself, in order, and a
character that reaches it once the focus has moved is handed to the widget focused now.
"""

from __future__ import annotations

from textual import events
from textual.widgets import Input


class TextInput(Input):
    async def _on_key(self, event: events.Key) -> None:
        if self._hand_on(event):
            return
        if event.key in ("tab", "shift+tab"):
            self._tab(event)
            return
        if not event.is_printable and await self._run_own_binding(event):
            event.stop()
            event.prevent_default()
            return
        await super()._on_key(event)

    def _hand_on(self, event: events.Key) -> bool:
        """A key handed here while this field had the focus, which a key ahead of it in the same
        burst (Tab) has moved since: it is for the widget focused now (as when typed slowly)."""
        # The screen's focus, not ``has_focus``: that is set by the Blur event, queued behind the keys.
        focused = self.screen.focused if self.is_attached else None
        if focused is None or focused is self:
            return False
        event.stop()
        event.prevent_default()
        focused._forward_event(events.Key(event.key, event.character))
        return True

    def _tab(self, event: events.Key) -> None:
        """Tab completes the suggested text, else moves the focus: here, in order with the keys
        around it. As the app's binding it ran after the characters typed behind it, which went
        on into this field (``invoice.render`` Tab Tab ``data.customer_id missing`` filtered on
        the name ``data.customer_id missing``)."""
        event.stop()
        event.prevent_default()
        suggestion = self._suggestion  # Textual keeps the ghost text here; there is no public accessor
        if event.key == "tab" and suggestion and suggestion != self.value:
            self.value = suggestion
            self.cursor_position = len(suggestion)
        elif event.key == "tab":
            self.screen.focus_next()
        else:
            self.screen.focus_previous()

    async def _run_own_binding(self, event: events.Key) -> bool:
        """Run this field's binding for ``event`` now; False if it has none (the key bubbles on)."""
        for key in event.aliases:
            for binding in self._bindings.key_to_bindings.get(key, ()):
                if binding.priority:
                    continue
                if await self.app.run_action(binding.action, self):
                    return True
        return False
