"""The synth room (``linlayout.synth``; imported by its bare name, the same modules: linlayout.room_alias)."""

from linlayout import room_alias

room_alias.alias(__name__)
