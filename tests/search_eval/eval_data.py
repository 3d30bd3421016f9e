"""A labelled evaluation set for `mcpmount.search`: real servers' tools, queries, distractors.

The real tools are written as the servers list them (names, descriptions and argument
schemas of the reference MCP servers filesystem, git, memory, fetch, time, sqlite and
puppeteer, the GitHub and Slack servers, plus a cloud-VM and a Postgres-style server).
The queries were written before any tuning of the ranking, phrased the way a model states
a need; each one names every tool that answers it. The distractors come from a seeded
generator over other domains (CRM, billing, HR, ...) whose nouns never overlap the real
servers' objects, so no distractor is a right answer.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import mcp_types

from mcpmount.search import SearchIndex
from mcpmount.tool import MountedTool

__all__ = [
    "QUERIES",
    "REAL_TOOLS",
    "Query",
    "distractors",
    "eval_corpus",
    "make_tool",
    "normal",
    "recall",
    "report",
    "unindexed_targets",
]

Arg = tuple[str, str, str]
"""(name, JSON type, description)"""


def make_tool(
    namespace: str, name: str, description: str, args: list[Arg], title: str | None = None
) -> MountedTool:
    """Build a mounted tool with an object input schema from ``args``."""
    properties: dict[str, object] = {}
    for arg_name, arg_type, arg_description in args:
        prop: dict[str, object] = {"type": arg_type, "description": arg_description}
        if arg_type == "array":
            prop["items"] = {"type": "string"}
        properties[arg_name] = prop
    schema: dict[str, object] = {
        "type": "object",
        "properties": properties,
        "required": [a[0] for a in args[:1]],
    }
    definition = mcp_types.Tool(
        name=name, title=title, description=description, input_schema=schema
    )
    return MountedTool(f"{namespace}__{name}", namespace, name, definition, deferred=True)


_S = "string"
_I = "integer"
_B = "boolean"
_A = "array"
_O = "object"

_FS: list[tuple[str, str, list[Arg]]] = [
    (
        "read_file",
        "Read the complete contents of a file from the file system. Handles various text "
        "encodings and provides detailed error messages if the file cannot be read. Use this "
        "tool when you need to examine the contents of a single file. Use the 'head' parameter "
        "to read only the first N lines of a file, or the 'tail' parameter to read only the "
        "last N lines of a file. Only works within allowed directories.",
        [
            ("path", _S, "Path of the file to read"),
            ("tail", _I, "If provided, returns only the last N lines of the file"),
            ("head", _I, "If provided, returns only the first N lines of the file"),
        ],
    ),
    (
        "read_media_file",
        "Read an image or audio file. Returns the base64 encoded data and MIME type. Only "
        "works within allowed directories.",
        [("path", _S, "Path of the image or audio file")],
    ),
    (
        "read_multiple_files",
        "Read the contents of multiple files simultaneously. This is more efficient than "
        "reading files one by one when you need to analyze or compare multiple files. Each "
        "file's content is returned with its path as a reference. Failed reads for individual "
        "files won't stop the entire operation. Only works within allowed directories.",
        [("paths", _A, "Array of file paths to read")],
    ),
    (
        "write_file",
        "Create a new file or completely overwrite an existing file with new content. Use "
        "with caution as it will overwrite existing files without warning. Handles text "
        "content with proper encoding. Only works within allowed directories.",
        [("path", _S, "Path of the file to write"), ("content", _S, "Content to write")],
    ),
    (
        "edit_file",
        "Make line-based edits to a text file. Each edit replaces exact line sequences with "
        "new content. Returns a git-style diff showing the changes made. Only works within "
        "allowed directories.",
        [
            ("path", _S, "Path of the file to edit"),
            ("edits", _A, "List of edits, each with oldText to search for and newText"),
            ("dryRun", _B, "Preview changes using git-style diff format"),
        ],
    ),
    (
        "create_directory",
        "Create a new directory or ensure a directory exists. Can create multiple nested "
        "directories in one operation. If the directory already exists, this operation will "
        "succeed silently. Perfect for setting up directory structures for projects or "
        "ensuring required paths exist. Only works within allowed directories.",
        [("path", _S, "Path of the directory to create")],
    ),
    (
        "list_directory",
        "Get a detailed listing of all files and directories in a specified path. Results "
        "clearly distinguish between files and directories with [FILE] and [DIR] prefixes. "
        "This tool is essential for understanding directory structure and finding specific "
        "files within a directory. Only works within allowed directories.",
        [("path", _S, "Path of the directory to list")],
    ),
    (
        "list_directory_with_sizes",
        "Get a detailed listing of all files and directories in a specified path, including "
        "sizes. Results clearly distinguish between files and directories with [FILE] and "
        "[DIR] prefixes. This tool is useful for understanding directory structure and "
        "finding specific files within a directory. Only works within allowed directories.",
        [
            ("path", _S, "Path of the directory to list"),
            ("sortBy", _S, "Sort entries by name or size"),
        ],
    ),
    (
        "directory_tree",
        "Get a recursive tree view of files and directories as a JSON structure. Each entry "
        "includes 'name', 'type' (file/directory), and 'children' for directories. Files "
        "have no children array, while directories always have a children array (which may "
        "be empty). The output is formatted with 2-space indentation for readability. Only "
        "works within allowed directories.",
        [
            ("path", _S, "Root path of the tree"),
            ("excludePatterns", _A, "Glob patterns to exclude"),
        ],
    ),
    (
        "move_file",
        "Move or rename files and directories. Can move files between directories and "
        "rename them in a single operation. If the destination exists, the operation will "
        "fail. Works across different directories and can be used for simple renaming "
        "within the same directory. Both source and destination must be within allowed "
        "directories.",
        [("source", _S, "Source path"), ("destination", _S, "Destination path")],
    ),
    (
        "search_files",
        "Recursively search for files and directories matching a pattern. The patterns "
        "should be glob-style patterns that match paths relative to the working directory. "
        "Use pattern like '*.ext' to match files in current directory, and '**/*.ext' to "
        "match files in all subdirectories. Returns full paths to all matching items. Great "
        "for finding files when you don't know their exact location. Only searches within "
        "allowed directories.",
        [
            ("path", _S, "Directory to search from"),
            ("pattern", _S, "Glob pattern to match"),
            ("excludePatterns", _A, "Glob patterns to exclude"),
        ],
    ),
    (
        "get_file_info",
        "Retrieve detailed metadata about a file or directory. Returns comprehensive "
        "information including size, creation time, last modified time, permissions, and "
        "type. This tool is perfect for understanding file characteristics without reading "
        "the actual content. Only works within allowed directories.",
        [("path", _S, "Path of the file or directory")],
    ),
    (
        "list_allowed_directories",
        "Returns the list of directories that this server is allowed to access. "
        "Subdirectories within these allowed directories are also accessible. Use this to "
        "understand which directories and their nested paths are available before trying to "
        "access files.",
        [],
    ),
]

_REPO = ("repo_path", _S, "Path to the Git repository")
_GIT: list[tuple[str, str, list[Arg]]] = [
    ("git_status", "Shows the working tree status", [_REPO]),
    (
        "git_diff_unstaged",
        "Shows changes in the working directory that are not yet staged",
        [_REPO, ("context_lines", _I, "Number of context lines")],
    ),
    (
        "git_diff_staged",
        "Shows changes that are staged for commit",
        [_REPO, ("context_lines", _I, "Number of context lines")],
    ),
    (
        "git_diff",
        "Shows differences between branches or commits",
        [_REPO, ("target", _S, "Branch or commit to compare with")],
    ),
    (
        "git_commit",
        "Records changes to the repository",
        [_REPO, ("message", _S, "Commit message")],
    ),
    (
        "git_add",
        "Adds file contents to the staging area",
        [_REPO, ("files", _A, "Files to stage")],
    ),
    ("git_reset", "Unstages all staged changes", [_REPO]),
    (
        "git_log",
        "Shows the commit logs",
        [
            _REPO,
            ("max_count", _I, "Maximum number of commits to show"),
            ("start_timestamp", _S, "Start timestamp for filtering commits"),
        ],
    ),
    (
        "git_create_branch",
        "Creates a new branch from an optional base branch",
        [
            _REPO,
            ("branch_name", _S, "Name of the new branch"),
            ("base_branch", _S, "Starting point for the new branch"),
        ],
    ),
    (
        "git_checkout",
        "Switches branches",
        [_REPO, ("branch_name", _S, "Name of branch to checkout")],
    ),
    (
        "git_show",
        "Shows the contents of a commit",
        [_REPO, ("revision", _S, "The revision (commit hash, branch name, tag) to show")],
    ),
    (
        "git_branch",
        "List Git branches",
        [
            _REPO,
            ("branch_type", _S, "Whether to list local branches ('local'), remote ('remote')"),
            ("contains", _S, "The commit sha that branch should contain"),
        ],
    ),
]

_MEMORY: list[tuple[str, str, list[Arg]]] = [
    (
        "create_entities",
        "Create multiple new entities in the knowledge graph",
        [("entities", _A, "An array of entities with name, entityType and observations")],
    ),
    (
        "create_relations",
        "Create multiple new relations between entities in the knowledge graph. Relations "
        "should be in active voice",
        [("relations", _A, "An array of relations with from, to and relationType")],
    ),
    (
        "add_observations",
        "Add new observations to existing entities in the knowledge graph",
        [("observations", _A, "Observations to add, each with entityName and contents")],
    ),
    (
        "delete_entities",
        "Delete multiple entities and their associated relations from the knowledge graph",
        [("entityNames", _A, "An array of entity names to delete")],
    ),
    (
        "delete_observations",
        "Delete specific observations from entities in the knowledge graph",
        [("deletions", _A, "Observations to delete, each with entityName and observations")],
    ),
    (
        "delete_relations",
        "Delete multiple relations from the knowledge graph",
        [("relations", _A, "An array of relations to delete")],
    ),
    ("read_graph", "Read the entire knowledge graph", []),
    (
        "search_nodes",
        "Search for nodes in the knowledge graph based on a query",
        [
            (
                "query",
                _S,
                "The search query to match against entity names, types, and observation content",
            )
        ],
    ),
    (
        "open_nodes",
        "Open specific nodes in the knowledge graph by their names",
        [("names", _A, "An array of entity names to retrieve")],
    ),
]

_FETCH: list[tuple[str, str, list[Arg]]] = [
    (
        "fetch",
        "Fetches a URL from the internet and optionally extracts its contents as markdown. "
        "Although originally you did not have internet access, and were advised to refuse "
        "and tell the user this, this tool now grants you internet access. Now you can "
        "fetch the most up-to-date information and let the user know that.",
        [
            ("url", _S, "URL to fetch"),
            ("max_length", _I, "Maximum number of characters to return."),
            ("start_index", _I, "Start the content from this character index"),
            (
                "raw",
                _B,
                "Get the actual HTML content of the requested page, without simplification.",
            ),
        ],
    ),
]

_TIME: list[tuple[str, str, list[Arg]]] = [
    (
        "get_current_time",
        "Get current time in a specific timezones",
        [("timezone", _S, "IANA timezone name (e.g., 'America/New_York', 'Europe/London')")],
    ),
    (
        "convert_time",
        "Convert time between timezones",
        [
            ("source_timezone", _S, "Source IANA timezone name"),
            ("time", _S, "Time to convert in 24-hour format (HH:MM)"),
            ("target_timezone", _S, "Target IANA timezone name"),
        ],
    ),
]

_OWNER = ("owner", _S, "Repository owner (username or organization)")
_REPO_NAME = ("repo", _S, "Repository name")
_GITHUB: list[tuple[str, str, list[Arg]]] = [
    (
        "create_or_update_file",
        "Create or update a single file in a GitHub repository",
        [
            _OWNER,
            _REPO_NAME,
            ("path", _S, "Path where to create/update the file"),
            ("content", _S, "Content of the file"),
            ("message", _S, "Commit message"),
            ("branch", _S, "Branch to create/update the file in"),
        ],
    ),
    (
        "search_repositories",
        "Search for GitHub repositories",
        [("query", _S, "Search query (see GitHub search syntax)"), ("page", _I, "Page number")],
    ),
    (
        "create_repository",
        "Create a new GitHub repository in your account",
        [
            ("name", _S, "Repository name"),
            ("description", _S, "Repository description"),
            ("private", _B, "Whether the repository should be private"),
        ],
    ),
    (
        "get_file_contents",
        "Get the contents of a file or directory from a GitHub repository",
        [_OWNER, _REPO_NAME, ("path", _S, "Path to the file or directory")],
    ),
    (
        "push_files",
        "Push multiple files to a GitHub repository in a single commit",
        [_OWNER, _REPO_NAME, ("branch", _S, "Branch to push to"), ("files", _A, "Files")],
    ),
    (
        "create_issue",
        "Create a new issue in a GitHub repository",
        [_OWNER, _REPO_NAME, ("title", _S, "Issue title"), ("body", _S, "Issue body")],
    ),
    (
        "list_issues",
        "List issues in a GitHub repository with filtering options",
        [
            _OWNER,
            _REPO_NAME,
            ("state", _S, "Filter by state: open, closed or all"),
            ("labels", _A, "Filter by labels"),
        ],
    ),
    (
        "update_issue",
        "Update an existing issue in a GitHub repository",
        [
            _OWNER,
            _REPO_NAME,
            ("issue_number", _I, "Issue number"),
            ("state", _S, "New state: open or closed"),
        ],
    ),
    (
        "add_issue_comment",
        "Add a comment to an existing issue",
        [_OWNER, _REPO_NAME, ("issue_number", _I, "Issue number"), ("body", _S, "Comment")],
    ),
    (
        "get_issue",
        "Get details of a specific issue in a GitHub repository.",
        [_OWNER, _REPO_NAME, ("issue_number", _I, "Issue number")],
    ),
    (
        "create_pull_request",
        "Create a new pull request in a GitHub repository",
        [
            _OWNER,
            _REPO_NAME,
            ("title", _S, "Pull request title"),
            ("head", _S, "The name of the branch where your changes are implemented"),
            ("base", _S, "The name of the branch you want the changes pulled into"),
        ],
    ),
    (
        "list_pull_requests",
        "List and filter repository pull requests",
        [_OWNER, _REPO_NAME, ("state", _S, "State of the pull requests to return")],
    ),
    (
        "merge_pull_request",
        "Merge a pull request",
        [
            _OWNER,
            _REPO_NAME,
            ("pull_number", _I, "Pull request number"),
            ("merge_method", _S, "Merge method to use: merge, squash or rebase"),
        ],
    ),
    (
        "create_pull_request_review",
        "Create a review on a pull request",
        [
            _OWNER,
            _REPO_NAME,
            ("pull_number", _I, "Pull request number"),
            ("event", _S, "The review action to perform: APPROVE, REQUEST_CHANGES or COMMENT"),
        ],
    ),
    (
        "get_pull_request_files",
        "Get the list of files changed in a pull request",
        [_OWNER, _REPO_NAME, ("pull_number", _I, "Pull request number")],
    ),
    (
        "fork_repository",
        "Fork a GitHub repository to your account or specified organization",
        [_OWNER, _REPO_NAME, ("organization", _S, "Optional: organization to fork to")],
    ),
    (
        "create_branch",
        "Create a new branch in a GitHub repository",
        [
            _OWNER,
            _REPO_NAME,
            ("branch", _S, "Name for the new branch"),
            ("from_branch", _S, "Optional: source branch to create from"),
        ],
    ),
    (
        "list_commits",
        "Get list of commits of a branch in a GitHub repository",
        [_OWNER, _REPO_NAME, ("sha", _S, "Branch name or commit SHA")],
    ),
    (
        "search_code",
        "Search for code across GitHub repositories",
        [("q", _S, "Search query using GitHub code search syntax")],
    ),
    (
        "search_issues",
        "Search for issues and pull requests across GitHub repositories",
        [("q", _S, "Search query using GitHub issues search syntax")],
    ),
    (
        "search_users",
        "Search for users on GitHub",
        [("q", _S, "Search query using GitHub users search syntax")],
    ),
]

_SLACK: list[tuple[str, str, list[Arg]]] = [
    (
        "slack_list_channels",
        "List public or pre-defined channels in the workspace with pagination",
        [("limit", _I, "Maximum number of channels to return"), ("cursor", _S, "Cursor")],
    ),
    (
        "slack_post_message",
        "Post a new message to a Slack channel",
        [
            ("channel_id", _S, "The ID of the channel to post to"),
            ("text", _S, "The message text to post"),
        ],
    ),
    (
        "slack_reply_to_thread",
        "Reply to a specific message thread in Slack",
        [
            ("channel_id", _S, "The ID of the channel containing the thread"),
            ("thread_ts", _S, "The timestamp of the parent message"),
            ("text", _S, "The reply text"),
        ],
    ),
    (
        "slack_add_reaction",
        "Add a reaction emoji to a message",
        [
            ("channel_id", _S, "The ID of the channel containing the message"),
            ("timestamp", _S, "The timestamp of the message to react to"),
            ("reaction", _S, "The name of the emoji reaction (without ::)"),
        ],
    ),
    (
        "slack_get_channel_history",
        "Get recent messages from a channel",
        [
            ("channel_id", _S, "The ID of the channel"),
            ("limit", _I, "Number of messages to retrieve"),
        ],
    ),
    (
        "slack_get_thread_replies",
        "Get all replies in a message thread",
        [
            ("channel_id", _S, "The ID of the channel containing the thread"),
            ("thread_ts", _S, "The timestamp of the parent message"),
        ],
    ),
    (
        "slack_get_users",
        "Get a list of all users in the workspace with their basic profile information",
        [("cursor", _S, "Pagination cursor"), ("limit", _I, "Maximum number of users")],
    ),
    (
        "slack_get_user_profile",
        "Get detailed profile information for a specific user",
        [("user_id", _S, "The ID of the user")],
    ),
]

_INSTANCE = ("instance_id", _S, "The ID of the virtual machine instance")
_CLOUD: list[tuple[str, str, list[Arg]]] = [
    (
        "list_instances",
        "List virtual machine instances in a project and zone, with their status",
        [("project", _S, "Project ID"), ("zone", _S, "Zone, e.g. us-central1-a")],
    ),
    (
        "get_instance",
        "Get the details of a virtual machine instance: machine type, status, IP addresses",
        [_INSTANCE],
    ),
    (
        "create_instance",
        "Create a virtual machine instance from an image with the given machine type",
        [
            ("name", _S, "Name of the new instance"),
            ("machine_type", _S, "Machine type, e.g. e2-medium"),
            ("image", _S, "Boot disk image"),
        ],
    ),
    (
        "start_instance",
        "Start a stopped virtual machine instance",
        [_INSTANCE],
    ),
    (
        "stop_instance",
        "Stop a running virtual machine instance. The instance can be started again later",
        [_INSTANCE, ("force", _B, "Power off without a graceful shutdown")],
    ),
    (
        "reboot_instance",
        "Reset a running virtual machine instance, like pressing its reset button",
        [_INSTANCE],
    ),
    (
        "delete_instance",
        "Delete a virtual machine instance and its boot disk",
        [_INSTANCE],
    ),
    (
        "resize_instance",
        "Change the machine type of a stopped instance",
        [_INSTANCE, ("machine_type", _S, "New machine type")],
    ),
    (
        "create_snapshot",
        "Create a snapshot of a disk attached to an instance",
        [("disk", _S, "Name of the disk"), ("snapshot_name", _S, "Name of the snapshot")],
    ),
    (
        "get_serial_port_output",
        "Return the serial port output of an instance, useful to debug boot problems",
        [_INSTANCE, ("port", _I, "Serial port number, 1-4")],
    ),
]

_SQLITE: list[tuple[str, str, list[Arg]]] = [
    (
        "read_query",
        "Execute a SELECT query on the SQLite database",
        [("query", _S, "SELECT SQL query to execute")],
    ),
    (
        "write_query",
        "Execute an INSERT, UPDATE, or DELETE query on the SQLite database",
        [("query", _S, "SQL query to execute")],
    ),
    (
        "create_table",
        "Create a new table in the SQLite database",
        [("query", _S, "CREATE TABLE SQL statement")],
    ),
    ("list_tables", "List all tables in the SQLite database", []),
    (
        "describe_table",
        "Get the schema information for a specific table",
        [("table_name", _S, "Name of the table to describe")],
    ),
    (
        "append_insight",
        "Add a business insight to the memo",
        [("insight", _S, "Business insight discovered from data analysis")],
    ),
]

_POSTGRES: list[tuple[str, str, list[Arg]]] = [
    ("query", "Run a read-only SQL query", [("sql", _S, "The SQL query to run")]),
]

_PUPPETEER: list[tuple[str, str, list[Arg]]] = [
    ("puppeteer_navigate", "Navigate to a URL", [("url", _S, "URL to navigate to")]),
    (
        "puppeteer_screenshot",
        "Take a screenshot of the current page or a specific element",
        [
            ("name", _S, "Name for the screenshot"),
            ("selector", _S, "CSS selector for element to screenshot"),
            ("width", _I, "Width in pixels (default: 800)"),
        ],
    ),
    (
        "puppeteer_click",
        "Click an element on the page",
        [("selector", _S, "CSS selector for element to click")],
    ),
    (
        "puppeteer_fill",
        "Fill out an input field",
        [("selector", _S, "CSS selector for input field"), ("value", _S, "Value to fill")],
    ),
    (
        "puppeteer_evaluate",
        "Execute JavaScript in the browser console",
        [("script", _S, "JavaScript code to execute")],
    ),
]

_BRAVE: list[tuple[str, str, list[Arg]]] = [
    (
        "brave_web_search",
        "Performs a web search using the Brave Search API, ideal for general queries, news, "
        "articles, and online content. Use this for broad information gathering, recent "
        "events, or when you need diverse web sources.",
        [("query", _S, "Search query (max 400 chars, 50 words)"), ("count", _I, "Results")],
    ),
    (
        "brave_local_search",
        "Searches for local businesses and places using Brave's Local Search API. Best for "
        "queries related to physical locations, businesses, restaurants, services, etc.",
        [("query", _S, "Local search query (e.g. 'pizza near Central Park')")],
    ),
]

_SERVERS: dict[str, list[tuple[str, str, list[Arg]]]] = {
    "filesystem": _FS,
    "git": _GIT,
    "memory": _MEMORY,
    "fetch": _FETCH,
    "time": _TIME,
    "github": _GITHUB,
    "slack": _SLACK,
    "cloud": _CLOUD,
    "sqlite": _SQLITE,
    "postgres": _POSTGRES,
    "puppeteer": _PUPPETEER,
    "brave": _BRAVE,
}

REAL_TOOLS: tuple[MountedTool, ...] = tuple(
    make_tool(ns, name, description, args)
    for ns, tools in _SERVERS.items()
    for name, description, args in tools
)


@dataclass(frozen=True, slots=True)
class Query:
    """A need and the public names of the tools that answer it."""

    text: str
    targets: tuple[str, ...]


def _q(text: str, *targets: str) -> Query:
    return Query(text, targets)


QUERIES: tuple[Query, ...] = (
    # Paraphrases: a need, in a model's words.
    _q("shut down the VM", "cloud__stop_instance"),
    _q("power off the virtual machine", "cloud__stop_instance"),
    _q("boot up the server again", "cloud__start_instance"),
    _q("restart the virtual machine", "cloud__reboot_instance"),
    _q("spin up a new VM", "cloud__create_instance"),
    _q("tear down and destroy the VM for good", "cloud__delete_instance"),
    _q(
        "give the instance more CPU and memory by changing its machine type",
        "cloud__resize_instance",
    ),
    _q("which VMs are running right now", "cloud__list_instances", "cloud__get_instance"),
    _q("back up the disk of a machine", "cloud__create_snapshot"),
    _q(
        "what changed since my last commit",
        "git__git_diff_unstaged",
        "git__git_status",
        "git__git_diff",
    ),
    _q("see what I have staged", "git__git_diff_staged", "git__git_status"),
    _q("stage these files for the next commit", "git__git_add"),
    _q("unstage everything", "git__git_reset"),
    _q("save my changes to the repository with a message", "git__git_commit"),
    _q("show the commit history", "git__git_log", "github__list_commits"),
    _q("switch to another branch", "git__git_checkout"),
    _q("start a new branch for my feature", "git__git_create_branch", "github__create_branch"),
    _q("compare two branches", "git__git_diff"),
    _q("is my working tree clean", "git__git_status"),
    _q("view the contents of a specific commit", "git__git_show"),
    _q("open a text file and show me what's inside", "filesystem__read_file"),
    _q("look at the last 20 lines of a log file", "filesystem__read_file"),
    _q("load several files at once", "filesystem__read_multiple_files"),
    _q("save this text to a file on disk", "filesystem__write_file"),
    _q("change a few lines in an existing file", "filesystem__edit_file"),
    _q("make a new folder", "filesystem__create_directory"),
    _q(
        "what files are in this folder",
        "filesystem__list_directory",
        "filesystem__list_directory_with_sizes",
    ),
    _q("show the folder structure recursively", "filesystem__directory_tree"),
    _q("rename a file", "filesystem__move_file"),
    _q("find all python files matching *.py", "filesystem__search_files"),
    _q("when was this file last modified and how big is it", "filesystem__get_file_info"),
    _q("which folders am I allowed to access", "filesystem__list_allowed_directories"),
    _q("view an image file", "filesystem__read_media_file"),
    _q("remember a new person in the knowledge graph", "memory__create_entities"),
    _q("link two entities with a relationship", "memory__create_relations"),
    _q("record new facts about an existing entity", "memory__add_observations"),
    _q("forget an entity", "memory__delete_entities"),
    _q("dump the whole knowledge graph", "memory__read_graph"),
    _q("look up nodes in my memory", "memory__search_nodes", "memory__open_nodes"),
    _q("download the contents of a web page", "fetch__fetch"),
    _q("get this URL as markdown", "fetch__fetch"),
    _q("what time is it in Tokyo", "time__get_current_time"),
    _q("convert 3pm New York time to London time", "time__convert_time"),
    _q("file a bug report on the repo", "github__create_issue"),
    _q("comment on an issue", "github__add_issue_comment"),
    _q("close an issue", "github__update_issue"),
    _q("open a pull request for my branch", "github__create_pull_request"),
    _q("approve the PR", "github__create_pull_request_review"),
    _q("merge the PR", "github__merge_pull_request"),
    _q("make a copy of someone else's repository under my account", "github__fork_repository"),
    _q("find code in github that uses this function", "github__search_code"),
    _q("send a message to the team channel", "slack__slack_post_message"),
    _q("respond in a slack thread", "slack__slack_reply_to_thread"),
    _q("react with a thumbs up emoji", "slack__slack_add_reaction"),
    _q("read recent messages in a channel", "slack__slack_get_channel_history"),
    _q("who is in the slack workspace", "slack__slack_get_users"),
    _q("run a SQL select against the database", "sqlite__read_query", "postgres__query"),
    _q("insert rows into the database", "sqlite__write_query"),
    _q("what tables does the database have", "sqlite__list_tables"),
    _q("show the columns of a table", "sqlite__describe_table"),
    _q("take a screenshot of the web page", "puppeteer__puppeteer_screenshot"),
    _q("click the submit button", "puppeteer__puppeteer_click"),
    _q("type my email into the login form field", "puppeteer__puppeteer_fill"),
    _q("run some javascript in the browser", "puppeteer__puppeteer_evaluate"),
    _q("search the internet for recent news", "brave__brave_web_search"),
    _q("find pizza restaurants near me", "brave__brave_local_search"),
    # Keywords: what a model types when it already knows the vocabulary.
    _q("stop instance", "cloud__stop_instance"),
    _q("git diff staged", "git__git_diff_staged"),
    _q("git log", "git__git_log"),
    _q("read file", "filesystem__read_file"),
    _q("list directory", "filesystem__list_directory", "filesystem__list_directory_with_sizes"),
    _q("directory tree", "filesystem__directory_tree"),
    _q("create issue github", "github__create_issue"),
    _q("list pull requests", "github__list_pull_requests"),
    _q("slack channels", "slack__slack_list_channels"),
    _q("current time timezone", "time__get_current_time"),
    _q("knowledge graph relations delete", "memory__delete_relations"),
    _q("delete observations", "memory__delete_observations"),
    _q("github repository search", "github__search_repositories"),
    _q("slack user profile", "slack__slack_get_user_profile"),
    # Names, exact or near.
    _q("git_status", "git__git_status"),
    _q("fetch", "fetch__fetch"),
    _q("github__get_file_contents", "github__get_file_contents"),
    _q(
        "+github issue",
        "github__create_issue",
        "github__list_issues",
        "github__update_issue",
        "github__get_issue",
        "github__add_issue_comment",
        "github__search_issues",
    ),
)


# --- Distractors ---------------------------------------------------------------------------

# Domains and their objects; none of these objects is a file, directory, commit, branch,
# issue, pull request, repository, VM/instance, message, channel, table, URL/page, time,
# entity, relation, observation or node, so no distractor answers a query above.
_DOMAINS: dict[str, tuple[str, ...]] = {
    "crm": ("contact", "lead", "deal", "account_note", "opportunity", "pipeline_stage"),
    "billing": ("invoice", "payment", "subscription", "refund", "credit_note", "tax_rate"),
    "hr": ("employee", "payroll_run", "leave_request", "job_posting", "candidate", "benefit"),
    "inventory": ("product", "stock_level", "sku", "supplier", "purchase_order", "bin"),
    "shipping": ("shipment", "parcel", "carrier", "label", "pickup", "customs_form"),
    "marketing": ("campaign", "coupon", "audience", "newsletter", "landing_offer", "segment"),
    "shop": ("order", "cart", "customer", "wishlist", "gift_card", "review_rating"),
    "travel": ("flight", "hotel_booking", "itinerary", "seat", "boarding_pass", "fare"),
    "music": ("playlist", "song", "album", "artist", "lyric", "radio_station"),
    "school": ("course", "student", "grade", "assignment", "classroom", "enrollment"),
    "clinic": ("patient", "prescription", "lab_result", "referral", "vaccine", "allergy"),
    "fleet": ("vehicle", "driver", "route", "fuel_card", "trip", "maintenance_job"),
    "iot": ("sensor", "thermostat", "light_bulb", "door_lock", "firmware", "reading"),
    "kitchen": ("recipe", "ingredient", "meal_plan", "pantry_item", "grocery_list", "menu"),
    "finance": ("budget", "expense", "ledger_entry", "forecast", "receipt", "vendor"),
    "legal": ("contract", "clause", "signature", "nda", "case_matter", "filing_fee"),
    "realty": ("listing", "property", "tenant", "lease", "showing", "mortgage_quote"),
    "events": ("ticket_sale", "venue", "attendee", "speaker", "sponsor", "badge"),
    "support": ("faq", "macro", "satisfaction_survey", "agent_shift", "sla_policy", "queue"),
    "sports": ("team", "player", "match_score", "league", "fixture", "transfer"),
    "farm": ("crop", "field_plot", "harvest", "livestock", "irrigation_zone", "feed_order"),
    "gym": ("membership", "workout", "trainer", "class_booking", "locker", "body_scan"),
    "library": ("book", "loan", "reader_card", "hold", "catalog_record", "fine"),
    "weather": ("forecast_area", "alert", "radar_frame", "station", "pollen_count", "uv_index"),
    "insurance": ("policy", "claim", "premium", "adjuster", "quote_request", "coverage"),
    "restaurant": ("reservation", "table_plan", "waiter", "dish", "tip_pool", "floor_layout"),
    "hotel": ("room", "guest", "housekeeping_task", "minibar", "rate_plan", "key_card"),
    "energy": ("meter", "tariff", "outage_report", "solar_panel", "battery_pack", "usage_bill"),
    "pets": ("pet", "vet_visit", "groomer", "adoption", "kennel", "microchip"),
    "charity": ("donor", "donation", "pledge", "volunteer", "grant", "fundraiser"),
}

# Verbs with the sentence each opens; several are the real servers' verbs on purpose, so
# the ranking has to use the objects, not only the action.
_VERBS: tuple[tuple[str, str], ...] = (
    ("list", "List {obj}s with optional filters and pagination"),
    ("get", "Get a single {obj} by its identifier"),
    ("create", "Create a new {obj}"),
    ("update", "Update the fields of an existing {obj}"),
    ("delete", "Delete a {obj} permanently"),
    ("search", "Search {obj}s by keyword"),
    ("archive", "Archive a {obj} so it no longer appears in default views"),
    ("export", "Export {obj}s as CSV"),
    ("import", "Import {obj}s from a CSV upload"),
    ("approve", "Approve a pending {obj}"),
    ("assign", "Assign a {obj} to an owner"),
    ("cancel", "Cancel a scheduled {obj}"),
    ("count", "Count {obj}s matching a filter"),
    ("tag", "Add tags to a {obj}"),
    ("sync", "Synchronize {obj}s with the upstream provider"),
    ("validate", "Validate a {obj} before it is submitted"),
    ("summarize", "Summarize recent activity for a {obj}"),
    ("duplicate", "Duplicate a {obj} with a new identifier"),
    ("restore", "Restore a previously archived {obj}"),
    ("notify", "Notify the owner of a {obj} about a change"),
)

_QUALIFIERS = (
    "",
    "bulk",
    "draft",
    "batch",
    "scheduled",
    "priority",
    "regional",
    "legacy",
    "shared",
    "external",
    "pending",
    "recurring",
    "premium",
    "partner",
    "internal",
    "sandbox",
    "archived",
)

_EXTRA_SENTENCES = (
    "Requires the {domain} admin scope.",
    "Returns the {obj} as JSON.",
    "Results are sorted by last activity.",
    "Fails if the {obj} is locked by another user.",
    "Supports an idempotency key.",
    "Only available on the {domain} enterprise plan.",
    "",
    "",
)


def distractors(count: int, seed: int = 20240601) -> list[MountedTool]:
    """Return ``count`` generated tools from other domains; the same for the same seed."""
    rng = random.Random(seed)
    combos = [
        (domain, obj, verb, qualifier)
        for qualifier in _QUALIFIERS
        for domain, objects in _DOMAINS.items()
        for obj in objects
        for verb in _VERBS
    ]
    if count > len(combos):
        raise ValueError(f"at most {len(combos)} distractors, asked for {count}")
    rng.shuffle(combos)
    tools: list[MountedTool] = []
    for domain, obj, (verb, sentence), qualifier in combos[:count]:
        noun = f"{qualifier}_{obj}" if qualifier else obj
        spoken = noun.replace("_", " ")
        description = sentence.format(obj=spoken)
        extra = rng.choice(_EXTRA_SENTENCES).format(domain=domain, obj=spoken)
        if extra:
            description += ". " + extra
        else:
            description += "."
        id_arg = (f"{obj}_id", _S, f"The ID of the {obj.replace('_', ' ')}")
        args: list[Arg] = [id_arg]
        if verb in ("list", "search", "count", "export"):
            args = [
                ("query", _S, f"Filter text for {spoken}s"),
                ("limit", _I, "Maximum number of results"),
            ]
        elif verb in ("create", "update"):
            args = [id_arg, ("fields", _O, f"Fields of the {spoken} to set")]
        if rng.random() < 0.3:
            args.append(("workspace_id", _S, f"The {domain} workspace"))
        title = f"{verb.capitalize()} {spoken}" if rng.random() < 0.3 else None
        tools.append(make_tool(domain, f"{verb}_{noun}", description, args, title))
    return tools


def eval_corpus(total: int = 10_000) -> list[MountedTool]:
    """Return the real tools mixed into distractors, ``total`` tools in all."""
    return list(REAL_TOOLS) + distractors(total - len(REAL_TOOLS))


def recall(index: SearchIndex, queries: tuple[Query, ...], k: int) -> tuple[float, list[str]]:
    """Return the share of ``queries`` with a target in the top ``k``, and the misses."""
    misses: list[str] = []
    for query in queries:
        names = [hit.tool.name for hit in index.search(query.text, limit=k).hits]
        if not set(names) & set(query.targets):
            misses.append(f"{query.text!r} -> {names[:3]} (want {query.targets[0]})")
    return 1 - len(misses) / len(queries), misses


def unindexed_targets(index: SearchIndex, queries: tuple[Query, ...]) -> set[str]:
    """The tools ``queries`` name as answers that ``index`` does not hold (none, if sound)."""
    wanted = {t for q in queries for t in q.targets}
    found = {hit.tool.name for t in wanted for hit in index.search(f"select:{t}").hits}
    return wanted - found


def normal(text: str) -> str:
    """``text`` lowercased with its spaces collapsed: how two sets' queries are compared."""
    return " ".join(text.lower().split())


def report(index: SearchIndex, name: str, queries: tuple[Query, ...]) -> tuple[float, float, str]:
    """recall@1, recall@5 and a printable account of both, with the misses."""
    at1, misses1 = recall(index, queries, 1)
    at5, misses5 = recall(index, queries, 5)
    text = (
        f"{name}: recall@1={at1:.3f} recall@5={at5:.3f} over {len(queries)} queries\n"
        "missed @5:\n  " + "\n  ".join(misses5) + "\nmissed @1:\n  " + "\n  ".join(misses1)
    )
    return at1, at5, text
