from crewai import Agent, Crew, Process, Task
from crewai.project import CrewBase, agent, crew, task, tool
from crewai.tools import BaseTool
from pydantic import BaseModel

from .tools import InvoiceLookupTool, KnowledgeBaseSearchTool, TicketLookupTool


class TriageResult(BaseModel):
    urgency: str
    area: str


@CrewBase
class SupportCrew:
    # Names in config/agents.yaml `tools:` must match @tool methods here; a name with no
    # method is a KeyError when the class is instantiated.
    @tool
    def ticket_lookup(self) -> BaseTool:
        return TicketLookupTool()

    @tool
    def knowledge_base_search(self) -> BaseTool:
        return KnowledgeBaseSearchTool()

    @tool
    def invoice_lookup(self) -> BaseTool:
        return InvoiceLookupTool()

    @agent
    def triage_agent(self) -> Agent:
        return Agent(config=self.agents_config["triage_agent"])

    @agent
    def billing_specialist(self) -> Agent:
        return Agent(config=self.agents_config["billing_specialist"])

    @agent
    def escalation_manager(self) -> Agent:
        return Agent(config=self.agents_config["escalation_manager"])

    @task
    def triage_ticket(self) -> Task:
        return Task(config=self.tasks_config["triage_ticket"], output_pydantic=TriageResult)

    @task
    def resolve_billing(self) -> Task:
        return Task(config=self.tasks_config["resolve_billing"])

    @task
    def escalate_if_needed(self) -> Task:
        return Task(config=self.tasks_config["escalate_if_needed"])

    @crew
    def crew(self) -> Crew:
        return Crew(agents=self.agents, tasks=self.tasks, process=Process.sequential)
