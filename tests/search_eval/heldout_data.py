"""A held-out query set for `mcpmount.search`, written blind to the tuning set.

The queries below were written from the real servers' tool lists in ``eval_data`` alone,
without reading the tuning queries (``eval_data.QUERIES``) or the synonym table and
stemmer in ``mcpmount.search``, and none was reworded or dropped after seeing a ranking.
They run over the same corpus (``eval_data.eval_corpus``: the real tools among seeded
distractors). Each query names every tool that answers it, decided before any run; most
are a need in a model's words, some are keywords.
"""

from __future__ import annotations

from search_eval.eval_data import Query

__all__ = ["HELDOUT"]


def _q(text: str, *targets: str) -> Query:
    return Query(text, targets)


_DIR_LISTINGS = (
    "filesystem__list_directory",
    "filesystem__list_directory_with_sizes",
    "filesystem__directory_tree",
)

HELDOUT: tuple[Query, ...] = (
    # filesystem
    _q("show me what's inside config.yaml", "filesystem__read_file"),
    _q("look at just the last 20 lines of the log", "filesystem__read_file"),
    _q("load a PNG picture so I can look at it", "filesystem__read_media_file"),
    _q("open several source files at once to compare them", "filesystem__read_multiple_files"),
    _q("save this text to disk as notes.txt", "filesystem__write_file"),
    _q("replace one line in a text file and show the diff", "filesystem__edit_file"),
    _q("make a new folder called build", "filesystem__create_directory"),
    _q("show me the contents of this directory", *_DIR_LISTINGS),
    _q(
        "which files in this folder take up the most space", "filesystem__list_directory_with_sizes"
    ),
    _q("rename report.txt to final.txt", "filesystem__move_file"),
    _q("find all the .py files under src", "filesystem__search_files"),
    _q("when was this file last changed", "filesystem__get_file_info"),
    _q("which folders am I permitted to access", "filesystem__list_allowed_directories"),
    _q("nested tree of the project's folders as JSON", "filesystem__directory_tree"),
    # git
    _q(
        "what have I modified but not staged yet",
        "git__git_diff_unstaged",
        "git__git_status",
    ),
    _q("mark app.py to be included in my next commit", "git__git_add"),
    _q("undo git add", "git__git_reset"),
    _q("commit my changes with a message", "git__git_commit"),
    _q("recent commit history", "git__git_log", "github__list_commits"),
    _q("switch to the develop branch", "git__git_checkout"),
    _q("start a new local branch off main", "git__git_create_branch"),
    _q("compare my branch against main", "git__git_diff"),
    _q("show what changed in commit abc123", "git__git_show"),
    _q("git branch list", "git__git_branch"),
    # memory
    _q("store another fact about a person already in memory", "memory__add_observations"),
    _q("link two people in the knowledge graph as colleagues", "memory__create_relations"),
    _q("forget everything stored about Bob", "memory__delete_entities"),
    _q("print everything the memory store holds", "memory__read_graph"),
    _q(
        "look up what I know about Project X in memory",
        "memory__search_nodes",
        "memory__open_nodes",
    ),
    _q("delete relations", "memory__delete_relations"),
    _q("observations delete", "memory__delete_observations"),
    _q("open nodes by name", "memory__open_nodes"),
    _q("entities create", "memory__create_entities"),
    # fetch
    _q("download a web page and convert it to markdown", "fetch__fetch"),
    _q("grab the contents of https://example.com", "fetch__fetch", "puppeteer__puppeteer_navigate"),
    # time
    _q("what time is it in Tokyo right now", "time__get_current_time"),
    _q("3pm in New York is what time in London", "time__convert_time"),
    # github
    _q("open a bug report on the repo", "github__create_issue"),
    _q("close issue 42", "github__update_issue"),
    _q("leave a comment on the issue", "github__add_issue_comment"),
    _q("open a PR from my feature branch", "github__create_pull_request"),
    _q("squash and merge the pull request", "github__merge_pull_request"),
    _q("request changes on this pull request", "github__create_pull_request_review"),
    _q("which files does this PR touch", "github__get_pull_request_files"),
    _q("make my own copy of someone's GitHub repo", "github__fork_repository"),
    _q("find code that calls a function across GitHub", "github__search_code"),
    _q("look up a GitHub user by name", "github__search_users"),
    _q("start a new GitHub project repository", "github__create_repository"),
    _q("upload several files to GitHub in one commit", "github__push_files"),
    _q("github issue search", "github__search_issues"),
    _q("get issue", "github__get_issue"),
    _q("repository search", "github__search_repositories"),
    _q("github file contents", "github__get_file_contents"),
    _q("create or update github file", "github__create_or_update_file"),
    _q("list open issues", "github__list_issues"),
    _q(
        "which pull requests are still open",
        "github__list_pull_requests",
        "github__search_issues",
    ),
    # slack
    _q("announce the release in Slack", "slack__slack_post_message"),
    _q("respond in the thread", "slack__slack_reply_to_thread"),
    _q("add a :tada: to that Slack post", "slack__slack_add_reaction"),
    _q("what has been said in #general lately", "slack__slack_get_channel_history"),
    _q("list everyone in our Slack", "slack__slack_get_users"),
    _q("get someone's Slack profile", "slack__slack_get_user_profile"),
    _q("slack channels list", "slack__slack_list_channels"),
    _q("thread replies", "slack__slack_get_thread_replies"),
    # cloud
    _q("boot the VM back up", "cloud__start_instance"),
    _q("restart the server", "cloud__reboot_instance"),
    _q("destroy the virtual machine", "cloud__delete_instance"),
    _q("give the VM more CPU and memory", "cloud__resize_instance"),
    _q("back up the VM's disk", "cloud__create_snapshot"),
    _q("why won't my VM boot, show console logs", "cloud__get_serial_port_output"),
    _q("provision an e2-medium machine", "cloud__create_instance"),
    _q("what's the IP address of my instance", "cloud__get_instance"),
    _q("which VMs are running in us-central1-a", "cloud__list_instances"),
    # sql
    _q("run a SELECT against the database", "sqlite__read_query", "postgres__query"),
    _q("insert a row into the users table", "sqlite__write_query"),
    _q("what tables are there in the database", "sqlite__list_tables"),
    _q("show the columns of the orders table", "sqlite__describe_table"),
    _q("record a business insight", "sqlite__append_insight"),
    _q("sql table create", "sqlite__create_table"),
    # puppeteer
    _q("open the page in a headless browser", "puppeteer__puppeteer_navigate"),
    _q("capture an image of the web page", "puppeteer__puppeteer_screenshot"),
    _q("press the submit button", "puppeteer__puppeteer_click"),
    _q("type my email into the login form", "puppeteer__puppeteer_fill"),
    _q("run some JavaScript on the page", "puppeteer__puppeteer_evaluate"),
    # brave
    _q("search the web for the latest news on the election", "brave__brave_web_search"),
    _q("find coffee shops nearby", "brave__brave_local_search"),
)
