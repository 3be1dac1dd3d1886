def lookup_customer(email: str) -> dict:
    """Find a customer record by e-mail."""
    return {"email": email, "plan": "pro"}


def get_invoice(invoice_id: str) -> dict:
    """Fetch an invoice by id."""
    return {"id": invoice_id, "amount": "49.00 EUR", "status": "paid"}


def issue_refund(invoice_id: str, amount: str) -> str:
    """Refund part or all of an invoice."""
    return f"refund of {amount} on {invoice_id} queued"
