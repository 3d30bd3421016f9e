"""A second held-out set: the published reference servers' own tool lists, and new queries.

NOT FOR TUNING. These queries were written before running or reading any search result
over this corpus (and before any change to the ranking they measure), as a new user would
type them, and none was reworded, dropped or relabelled after seeing a ranking. Do not
change the ranking to fix a query here, and do not change a query to suit the ranking; a
change that helps only these queries is tuning, and the figure then means nothing. Four
first drafts turned out to repeat tuning queries word for word; they were reworded before
any run, by the check in ``test_search_reference.py`` that refuses a query another set has.

``reference_servers.json`` holds the ``tools/list`` answers of sixteen reference servers
as published on npm and PyPI (the package and version are in the file), taken by running
each server and listing its tools; the Redis server needs a live Redis to start, so its
four tools were copied from its package's ``dist/index.js``. The corpus puts these tools
among the same seeded distractors ``eval_data`` uses, 10,000 tools in all. Each query names
every tool that answers it; when a need does not say which server (a branch on GitHub or
in the local repository), every server's tool that meets it is a target.
"""

from __future__ import annotations

import json
from pathlib import Path

import mcp_types

from mcpmount.tool import MountedTool
from search_eval.eval_data import Query, distractors

__all__ = ["REFERENCE_QUERIES", "reference_corpus", "reference_tools"]

_LISTINGS = Path(__file__).with_name("reference_servers.json")


def reference_tools() -> list[MountedTool]:
    """The reference servers' tools as they list them, named ``<server>__<tool>``."""
    servers: dict[str, dict[str, object]] = json.loads(_LISTINGS.read_text(encoding="utf-8"))
    tools: list[MountedTool] = []
    for namespace, server in servers.items():
        listed = server["tools"]
        assert isinstance(listed, list)
        for raw in listed:  # pyright: ignore[reportUnknownVariableType]
            definition = mcp_types.Tool.model_validate(raw)
            name = f"{namespace}__{definition.name}"
            tools.append(MountedTool(name, namespace, definition.name, definition, deferred=True))
    return tools


def reference_corpus(total: int = 10_000) -> list[MountedTool]:
    """Return the reference tools among seeded distractors, ``total`` tools in all."""
    real = reference_tools()
    return real + distractors(total - len(real))


def _q(text: str, *targets: str) -> Query:
    return Query(text, targets)


_READ_TEXT = ("filesystem__read_text_file", "filesystem__read_file")
_CREATE_BRANCH = ("git__git_create_branch", "github__create_branch", "gitlab__create_branch")
_PLACES = ("maps__maps_search_places", "brave__brave_local_search")
_SELECT = ("sqlite__read_query", "postgres__query")

REFERENCE_QUERIES: tuple[Query, ...] = (
    # filesystem
    _q("print the contents of README.md", *_READ_TEXT),
    _q("show the first 10 lines of main.py", *_READ_TEXT),
    _q("view this screenshot.png", "filesystem__read_media_file"),
    _q("get the text of three different config files in one go", "filesystem__read_multiple_files"),
    _q("overwrite settings.json with new contents", "filesystem__write_file"),
    _q("change the port number in server.conf from 8080 to 9090", "filesystem__edit_file"),
    _q("preview a find-and-replace in a file without applying it", "filesystem__edit_file"),
    _q("mkdir -p src/utils/helpers", "filesystem__create_directory"),
    _q(
        "ls the current folder",
        "filesystem__list_directory",
        "filesystem__list_directory_with_sizes",
    ),
    _q(
        "how big are the files in downloads",
        "filesystem__list_directory_with_sizes",
        "filesystem__get_file_info",
    ),
    _q("recursive folder structure, skipping node_modules", "filesystem__directory_tree"),
    _q("move old logs into the archive folder", "filesystem__move_file"),
    _q("locate every markdown file in the repo", "filesystem__search_files"),
    _q("file permissions and creation date", "filesystem__get_file_info"),
    _q("what paths is this server allowed to touch", "filesystem__list_allowed_directories"),
    # git
    _q(
        "any uncommitted changes in this repo?",
        "git__git_status",
        "git__git_diff_unstaged",
        "git__git_diff_staged",
    ),
    _q("see what I've already staged", "git__git_diff_staged"),
    _q("diff between two commits", "git__git_diff"),
    _q("stage all changed files", "git__git_add"),
    _q("take all my files back out of the staging area", "git__git_reset"),
    _q("save a snapshot of my work with message 'fix typo'", "git__git_commit"),
    _q("who committed last week", "git__git_log", "github__list_commits"),
    _q("go back to the main branch", "git__git_checkout"),
    _q("branch off from release-1.2 for a hotfix", *_CREATE_BRANCH),
    _q("which branches contain commit 4f2a", "git__git_branch"),
    _q("show app.py as it was in HEAD~3", "git__git_show"),
    # memory
    _q(
        "remember that Alice works at Acme",
        "memory__create_entities",
        "memory__add_observations",
        "memory__create_relations",
    ),
    _q("add new people to the knowledge graph", "memory__create_entities"),
    _q("Alice no longer manages Bob, remove that link", "memory__delete_relations"),
    _q("remove an outdated note about a person from memory", "memory__delete_observations"),
    _q("erase the entity for Acme Corp", "memory__delete_entities"),
    _q("give me the full memory graph", "memory__read_graph"),
    _q("search memory for anything about kubernetes", "memory__search_nodes"),
    _q("retrieve the entities named Alice and Bob", "memory__open_nodes"),
    # everything (the reference test server)
    _q("repeat back what I say", "everything__echo"),
    _q("add 2 and 3", "everything__get-sum"),
    _q("show me the server's environment variables", "everything__get-env"),
    _q("compress this file with gzip", "everything__gzip-file-as-resource"),
    _q("turn random log messages on or off", "everything__toggle-simulated-logging"),
    _q("demo a slow task that reports progress", "everything__trigger-long-running-operation"),
    _q("get a small test image", "everything__get-tiny-image"),
    _q("example of a message with annotations", "everything__get-annotated-message"),
    _q("return output that matches an output schema", "everything__get-structured-content"),
    _q("simulate a deep research task on a topic", "everything__simulate-research-query"),
    _q(
        "links to a few sample resources",
        "everything__get-resource-links",
        "everything__get-resource-reference",
    ),
    _q(
        "turn on resource subscription update notifications",
        "everything__toggle-subscriber-updates",
    ),
    # github
    _q("start a pull request review and approve it", "github__create_pull_request_review"),
    _q("has CI passed on PR 17", "github__get_pull_request_status"),
    _q("rebase the PR onto the latest main", "github__update_pull_request_branch"),
    _q(
        "read the review comments left on my PR",
        "github__get_pull_request_comments",
        "github__get_pull_request_reviews",
    ),
    _q("who approved this pull request", "github__get_pull_request_reviews"),
    _q("details of pull request #5", "github__get_pull_request"),
    _q("create a repo on GitHub called demo", "github__create_repository"),
    _q("search GitHub for repositories about rust web frameworks", "github__search_repositories"),
    _q("assign issue 12 to me and add the bug label", "github__update_issue"),
    _q("commits on the dev branch of octocat/hello-world", "github__list_commits"),
    _q("edit README.md directly on GitHub", "github__create_or_update_file"),
    _q("find GitHub issues mentioning memory leak", "github__search_issues", "github__list_issues"),
    _q("create a branch on GitHub from main", "github__create_branch"),
    _q("show me the open PRs on the repo", "github__list_pull_requests", "github__search_issues"),
    # gitlab
    _q("open a merge request from feature to main", "gitlab__create_merge_request"),
    _q("new GitLab project", "gitlab__create_repository"),
    _q("file a GitLab issue about the broken build", "gitlab__create_issue"),
    _q("fork a project on GitLab into my namespace", "gitlab__fork_repository"),
    _q("read a file from a GitLab project at a tag", "gitlab__get_file_contents"),
    _q("commit several files to GitLab at once", "gitlab__push_files"),
    _q("find GitLab projects named terraform", "gitlab__search_repositories"),
    # maps and local search
    _q("latitude and longitude of the Eiffel Tower", "maps__maps_geocode"),
    _q("what street address is at 40.7128, -74.0060", "maps__maps_reverse_geocode"),
    _q("how do I drive from Boston to Cambridge", "maps__maps_directions"),
    _q(
        "how long would it take to get from each warehouse to each store",
        "maps__maps_distance_matrix",
    ),
    _q("how high above sea level is Denver", "maps__maps_elevation"),
    _q(
        "opening hours and phone number of this restaurant",
        "maps__maps_place_details",
        "brave__brave_local_search",
    ),
    _q("pizza places within 2 km of my hotel", *_PLACES),
    _q("dentists near me with good reviews", *_PLACES),
    # web search and fetch
    _q("google the error message", "brave__brave_web_search"),
    _q("look up recent articles about the new iPhone", "brave__brave_web_search"),
    _q("read this URL and give me the text", "fetch__fetch"),
    _q("get the raw HTML of a web page", "fetch__fetch"),
    # puppeteer
    _q("go to https://news.ycombinator.com in the browser", "puppeteer__puppeteer_navigate"),
    _q("snap a picture of what the browser shows", "puppeteer__puppeteer_screenshot"),
    _q("mouse over the menu to open it", "puppeteer__puppeteer_hover"),
    _q("pick 'Canada' from the country dropdown", "puppeteer__puppeteer_select"),
    _q("put 'hello' into the search input", "puppeteer__puppeteer_fill"),
    _q("tick the checkbox", "puppeteer__puppeteer_click"),
    _q("run document.title in the page", "puppeteer__puppeteer_evaluate"),
    # redis
    _q("cache this value in Redis for one hour", "redis__set"),
    _q("read the value stored under session:42", "redis__get"),
    _q("remove keys from the cache", "redis__delete"),
    _q("which keys start with user:", "redis__list"),
    # databases
    _q("query the Postgres database", "postgres__query"),
    _q("how many rows are in the orders table", *_SELECT),
    _q("delete old rows from the sessions table", "sqlite__write_query"),
    _q("make a new table for storing logs", "sqlite__create_table"),
    _q("describe the structure of the users table", "sqlite__describe_table"),
    _q("show all tables in sqlite", "sqlite__list_tables"),
    _q("note down an insight from the analysis", "sqlite__append_insight"),
    # time
    _q("current time in UTC", "time__get_current_time"),
    _q("what's 9am Pacific in Berlin time", "time__convert_time"),
    # sequential thinking
    _q("think through this problem step by step", "thinking__sequentialthinking"),
    _q(
        "break a hard problem into a chain of thoughts I can revise", "thinking__sequentialthinking"
    ),
    # slack
    _q("send a message to the #dev channel", "slack__slack_post_message"),
    _q("reply to Jane's message in its thread", "slack__slack_reply_to_thread"),
    _q("react with thumbs up", "slack__slack_add_reaction"),
    _q("catch me up on the last messages in #random", "slack__slack_get_channel_history"),
    _q("what channels exist in our workspace", "slack__slack_list_channels"),
    _q("list all members of our Slack team", "slack__slack_get_users"),
    _q("find Bob's title and email on Slack", "slack__slack_get_user_profile"),
    _q("read all responses to that thread", "slack__slack_get_thread_replies"),
    # keywords
    _q("gzip", "everything__gzip-file-as-resource"),
    _q("geocode address", "maps__maps_geocode"),
    _q("redis get key", "redis__get"),
    _q("pull request status", "github__get_pull_request_status"),
    _q("merge request", "gitlab__create_merge_request"),
    _q("sequential thinking", "thinking__sequentialthinking"),
    _q("timezone convert", "time__convert_time"),
)
