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
"""

from __future__ import annotations

from textual import events
from textual.widgets import Input


class TextInput(Input):
    async def _on_key(self, event: events.Key) -> None:
        if not event.is_printable and await self._run_own_binding(event):
            event.stop()
            event.prevent_default()
            return
        await super()._on_key(event)

    async def _run_own_binding(self, event: events.Key) -> bool:
        """Run this field's binding for ``event`` now; False if it has none (the key bubbles on)."""
        for key in event.aliases:
            for binding in self._bindings.key_to_bindings.get(key, ()):
                if binding.priority:
                    continue
                if await self.app.run_action(binding.action, self):
                    return True
        return False
