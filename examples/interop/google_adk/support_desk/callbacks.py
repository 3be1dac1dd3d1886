def require_refund_approval(tool, args, tool_context):
    """Block refunds above 100 until a human approves them."""
    if getattr(tool, "name", "") == "issue_refund" and float(str(args.get("amount", "0")).split()[0]) > 100:
        return {"error": "refund needs approval"}
    return None
