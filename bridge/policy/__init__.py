"""Policy decisions enforced in code, never by the prompt.

whitelist           the compiled command whitelist: which commands ``run_command`` may run
approvals           the approval broker: one prompt to one player, one answer
approval_commands   ``/mineclaw approve`` and ``/mineclaw deny``, the answers to prompts
invisible           code points that show nothing, refused in commands and intents
budgets             token budgets by tier: periods, refusals, reset times
guest_tools         which tools a guest (a player without a budget tier) may use
"""
