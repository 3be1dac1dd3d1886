from crewai.tools import BaseTool
from pydantic import BaseModel, Field


class _Query(BaseModel):
    query: str = Field(..., description="What to look for")


class TicketLookupTool(BaseTool):
    name: str = "ticket_lookup"
    description: str = "Fetch a support ticket and its history by ticket id."
    args_schema: type[BaseModel] = _Query

    def _run(self, query: str) -> str:
        return f"ticket {query}: open, priority normal"


class KnowledgeBaseSearchTool(BaseTool):
    name: str = "knowledge_base_search"
    description: str = "Search the help-center articles."
    args_schema: type[BaseModel] = _Query

    def _run(self, query: str) -> str:
        return "No article matches."


class InvoiceLookupTool(BaseTool):
    name: str = "invoice_lookup"
    description: str = "Look up an invoice by number or customer e-mail."
    args_schema: type[BaseModel] = _Query

    def _run(self, query: str) -> str:
        return "INV-1042: 49.00 EUR, paid"
