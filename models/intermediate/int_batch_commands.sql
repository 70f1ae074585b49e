{{
    config(
        materialized='incremental',
        incremental_strategy='append',
        on_schema_change='append_new_columns',
        pre_hook="{{ qrepl_queue_changelog_view() }}",
        full_refresh=false,
        meta={'qrepl_skip_when': 'nothing_new_queued'},
    )
}}
/* Cuts the batch: every queued command not in an earlier batch gets this batch's id, once.
   Validation happens here (the hostile-input catalogue: REJECT_REASONS in
   python/qrepl/core/vocabulary.py, in the same order); a command failing a check quarantines its whole
   transaction. Byte-identical copies of a queued command collapse to one. The queue is read
   as of one snapshot, recorded in `queue_snapshot_id`; after the first batch, only the rows
   appended since the last batch's snapshot (macros/queue/qrepl_queue_rows.sql; the pre-hook
   makes Iceberg's changelog view that read uses, in this model's session).
   The publisher is read here, once per batch, as of the snapshot the run's publisher trigger
   examined (macro qrepl_publisher_as_stamped): each command carries its row's state at the
   cut (`root_exists`, `root_version`, `root_row`), the start of the row's chain that the
   resolution, the judging and the compare-and-swap all use. Frozen with the batch, so a run
   finished after a crash resolves against what the batch first saw.
   Decides docs/spec.md 5.1 (Order), 5.9 (Quarantine). */
{%- set publication = qrepl_config() -%}
{%- set batch_id = qrepl_batch_id() -%}
/* the batch's row filters (docs/spec.md §11), none when nothing new is queued (this model is
   not run) or no subscription has one: then this statement is what it is without partitions */
{%- set row_filters = qrepl_batch_row_filters('nothing_new_queued') -%}
/* the batch's column filters (§11): a subscription that takes some of an article's columns
   sends exactly those, checked against its list here; none when no subscription has one */
{%- set column_lists = qrepl_batch_column_lists('nothing_new_queued') -%}
/* a queued command's identity, and its whole staged content (reference.QUEUE_COLUMNS): an
    earlier batch took a queued row only if it took that very content; a row with the
    identity of a taken command but other content is new, and quarantined */
{%- set identity_columns = ['subscriber', 'tran_id', 'command_seq', 'enqueued_at'] -%}
{%- set content_columns = [
    'subscriber', 'generation', 'tran_id', 'tran_seq', 'command_seq', 'article', 'op', 'row_key',
    'old_version', 'new_version', 'new_row', 'old_row', 'enqueued_at',
] -%}

with

stg_replication_queue as (

    select * from {{ ref('stg_replication_queue') }}

),

int_batch_subscriptions as (

    select * from {{ ref('int_batch_subscriptions') }}
    where batch_id = {{ batch_id }}

),

{% if is_incremental() %}
    earlier_batches as (

        select * from {{ this }}

    ),

    taken_before as (

        -- the queue rows read that an earlier batch already took, content and all: when only
        -- the rows appended since the last batch are read, a handful (a command delivered
        -- again)
        select
            earlier_batches.subscriber,
            earlier_batches.generation,
            earlier_batches.tran_id,
            earlier_batches.tran_seq,
            earlier_batches.command_seq,
            earlier_batches.article,
            earlier_batches.op,
            earlier_batches.row_key,
            earlier_batches.old_version,
            earlier_batches.new_version,
            earlier_batches.new_row,
            earlier_batches.old_row,
            earlier_batches.enqueued_at
        from earlier_batches
        left semi join stg_replication_queue as queued
            on
                {%- for column in content_columns %}
                    {{ 'and ' if not loop.first }}earlier_batches.{{ column }} <=> queued.{{ column }}
                {%- endfor %}

    ),
{% endif %}

new_queue_rows as (

    select queued.*
    from stg_replication_queue as queued
    {% if is_incremental() %}
        left anti join taken_before
            on
                {%- for column in content_columns %}
                    {{ 'and ' if not loop.first }}queued.{{ column }} <=> taken_before.{{ column }}
                {%- endfor %}
    {% endif %}
    where {{ batch_not_yet_written(batch_id) }}

),

new_commands as (

    -- byte-identical copies are still here: commands_distinct collapses them. queue_order is
    -- left out, so copies appended by two commits (a command delivered again) are one
    -- command; the transaction's order comes from transaction_orders
    select
        {{ content_columns | join(', ') }},
        queue_snapshot_id
    from new_queue_rows

),

transaction_orders as (

    -- A transaction's queue order: the first commit that appended one of its commands
    -- (SQL Server's orderkey), read on the queue's narrow columns
    select
        subscriber,
        tran_id,
        min(queue_order) as queue_order
    from new_queue_rows
    group by subscriber, tran_id

),

new_command_keys as (  -- noqa: ST03

    -- read by publisher_rows_sql below
    select distinct
        article,
        row_key
    from new_commands

),

publisher_rows as (
    {{ publisher_rows_sql(publication, 'new_command_keys', as_stamped=true) }}
),

publisher_keys as (

    -- one row per publisher key: a table that holds a key twice (written around qrepl) must
    -- not multiply the commands on it into false conflicts. Partitioned and sorted as
    -- commands_distinct is (row_hash, see there)
    select
        row_hash,
        article,
        row_key,
        max(msrepl_tran_version) as msrepl_tran_version,
        max(row_json) as row_json,
        count(*) as copies
    from (
        select *
        from (
            select
                *,
                xxhash64(article, row_key) as row_hash
            from publisher_rows
        ) as hashed
        distribute by row_hash, row_key
    ) as publisher_rows
    group by row_hash, article, row_key

),

new_commands_typed as (
    {{ queued_rows_typed_sql(publication, 'new_commands') }}
),

commands_distinct as (

    -- byte-identical copies of a queued command collapse to one (their parse is the same, so
    -- the parsed columns do not tell copies apart). Partitioned by row first: that one
    -- shuffle of the commands (wide rows) serves this distinct and the publisher lookup in
    -- commands_found, which publisher_keys is partitioned for too. The lookup joins on
    -- row_hash, the 64-bit hash of (article, row_key), and row_key: Spark sorts both sides by
    -- the join keys, comparing an 8-byte prefix of the first before whole rows, and a key's
    -- JSON text ('{"item_id":...') starts with the same bytes on most rows; the hash tells
    -- them apart from the prefix (docs/stack.md note 22). The article is matched in a
    -- condition kept out of the join keys, so the keys are exactly the partitioning
    select distinct *
    from (
        select *
        from (
            select
                *,
                xxhash64(article, row_key) as row_hash
            from new_commands_typed
        ) as hashed
        distribute by row_hash, row_key
    ) as commands

),

earlier_transactions as (

    {% if is_incremental() %}
        -- only the earlier transactions this batch's commands name: the new commands looked
        -- up in the history, never the whole history joined and shuffled
        select distinct
            earlier_batches.subscriber,
            earlier_batches.tran_id
        from earlier_batches
        left semi join new_commands
            on
                earlier_batches.subscriber = new_commands.subscriber
                and earlier_batches.tran_id = new_commands.tran_id
    {% else %}
        select
            cast(null as string) as subscriber,
            cast(null as string) as tran_id
        where false
    {% endif %}

),

earlier_identities as (

    {% if is_incremental() %}
        -- the identities of earlier commands this batch's commands carry again (with other
        -- content: the same content was taken before and is not new)
        select distinct
            earlier_batches.subscriber,
            earlier_batches.tran_id,
            earlier_batches.command_seq,
            earlier_batches.enqueued_at
        from earlier_batches
        left semi join new_commands
            on
                {%- for column in identity_columns %}
                    {{ 'and ' if not loop.first }}earlier_batches.{{ column }} <=> new_commands.{{ column }}
                {%- endfor %}
    {% else %}
        select
            cast(null as string) as subscriber,
            cast(null as string) as tran_id,
            cast(null as int) as command_seq,
            cast(null as timestamp) as enqueued_at
        where false
    {% endif %}

),

earlier_versions as (

    {% if is_incremental() %}
        -- only the earlier versions this batch's commands carry, as above
        select distinct earlier_batches.new_version
        from earlier_batches
        left semi join new_commands
            on earlier_batches.new_version = new_commands.new_version
    {% else %}
        select cast(null as string) as new_version
        where false
    {% endif %}

),

commands_found as (

    -- what the checks look up, joined where the commands are already partitioned by the key
    -- looked up: the publisher (by row, as commands_distinct left them) and the subscription
    -- here, the earlier versions in versions_counted, the earlier transactions in
    -- duplicates_counted
    select
        commands.*,
        int_batch_subscriptions.subscriber is not null as subscription_known,
        int_batch_subscriptions.generation as subscription_generation,
        publisher_keys.copies as publisher_copies,
        publisher_keys.row_key is not null as root_exists,
        publisher_keys.msrepl_tran_version as root_version,
        publisher_keys.row_json as root_row
    from commands_distinct as commands
    left join publisher_keys
        on
            commands.row_hash = publisher_keys.row_hash
            and commands.row_key = publisher_keys.row_key
            and coalesce(commands.article = publisher_keys.article, false)
    left join int_batch_subscriptions
        on commands.subscriber = int_batch_subscriptions.subscriber

),

versions_counted as (

    select
        commands_found.*,
        earlier_versions.new_version is not null as new_version_taken_before,
        case
            when commands_found.new_version is not null then count(*) over (partition by commands_found.new_version)
            else 0
        end as same_new_version_count
    from commands_found
    left join earlier_versions
        on commands_found.new_version = earlier_versions.new_version

),

duplicates_counted as (

    -- every window here and in transactions_checked is over a transaction (the same command
    -- is the same command_seq within it), so one shuffle of the commands serves them all.
    -- tran_id comes first: Spark sorts the rows by the partition columns in their order,
    -- comparing a short prefix of the first column before whole rows, and a subscriber's
    -- name, shared by many transactions, rarely tells two rows apart (docs/stack.md note 22;
    -- docs/performance.md, "Thresholds and choices measured")
    select
        versions_counted.*,
        earlier_transactions.tran_id is not null as tran_id_taken_before,
        transaction_orders.queue_order,
        earlier_identities.tran_id is not null as identity_taken_before,
        count(*) over (
            partition by versions_counted.tran_id, versions_counted.subscriber
            order by versions_counted.command_seq
            range between current row and current row
        ) as same_command_count,
        size(collect_set(versions_counted.command_seq) over (
            partition by versions_counted.tran_id, versions_counted.subscriber
        )) as command_seq_count
    from versions_counted
    left join earlier_transactions
        on
            versions_counted.subscriber = earlier_transactions.subscriber
            and versions_counted.tran_id = earlier_transactions.tran_id
    left join transaction_orders
        on
            versions_counted.subscriber = transaction_orders.subscriber
            and versions_counted.tran_id = transaction_orders.tran_id
    left join earlier_identities
        on
            {%- for column in identity_columns %}
                {{ 'and ' if not loop.first }}versions_counted.{{ column }} <=> earlier_identities.{{ column }}
            {%- endfor %}

),

{% if row_filters %}
    partitions_parsed as (

        -- the new row and the publisher's row at the cut, read by the types of the columns
        -- the batch's filters name, for the commands of each filtered article (row images are
        -- Spark's own JSON, which these types read back exactly)
        select
            duplicates_counted.*
            {{ qrepl_filter_images(row_filters, 'typed_row', 'new') }}
            {{ qrepl_filter_images(row_filters, 'root_row', 'root') }}
        from duplicates_counted

    ),
{% endif %}

commands_checked as (

    select
        commands.*,
        case
            when commands.tran_id is null or commands.tran_id = '' then 'null tran_id'
            when not commands.subscription_known then 'unknown subscriber'
            when commands.generation is null then 'null generation'
            when commands.generation > commands.subscription_generation then 'generation newer than the subscription'
            when commands.tran_seq is null or commands.tran_seq < 0 then 'null or negative tran_seq'
            when commands.enqueued_at is null then 'null enqueued_at'
            when not commands.article_known then 'unknown article'
            when commands.op is null or commands.op not in ('I', 'U', 'D') then 'bad op'
            when
                commands.command_seq is null or commands.command_seq < 1
                or commands.command_seq > commands.command_seq_count
                then 'command_seq not 1..n'
            when octet_length(commands.new_row) > {{ qrepl_max_row_bytes() }} then 'oversize row'
            when octet_length(commands.row_key) > {{ qrepl_max_key_bytes() }} then 'oversize key'
            when commands.op = 'I' and commands.old_version is not null then 'I with old_version'
            when commands.op = 'I' and commands.new_version is null then 'I without new_version'
            when commands.op = 'U' and commands.old_version is null then 'U without old_version'
            when commands.op = 'U' and commands.new_version is null then 'U without new_version'
            when commands.op = 'D' and commands.old_version is null then 'D without old_version'
            when commands.op = 'D' and commands.new_version is not null then 'D with new_version'
            when
                not coalesce(commands.old_version rlike '{{ qrepl_uuid_pattern() }}', true)
                or not coalesce(commands.new_version rlike '{{ qrepl_uuid_pattern() }}', true)
                then 'version not a UUID'
            when commands.row_key is null or commands.row_key = '' then 'missing key'
            when not commands.key_json_ok then 'malformed key JSON'
            when commands.key_field_count = 0 then 'empty key'
            when commands.key_missing_column then 'missing key column'
            when commands.key_null_value then 'null key value'
            when not (commands.canonical_key <=> commands.row_key) then 'non-canonical key'
            when commands.op in ('I', 'U') and not commands.row_json_ok then 'malformed JSON'
            when commands.op in ('I', 'U') and {{ qrepl_columns_sent(column_lists, 'commands', 'extra') }} then 'unknown extra columns'
            when commands.op in ('I', 'U') and {{ qrepl_columns_sent(column_lists, 'commands', 'missing') }} then 'missing column'
            when commands.op in ('I', 'U') and commands.row_null_key_value then 'null key value'
            when commands.op in ('I', 'U') and commands.row_wrong_type then 'wrong value type'
            when commands.op in ('I', 'U') and not (commands.typed_key <=> commands.row_key) then 'key mismatch'
            when commands.publisher_copies > 1 then 'publisher table holds this key more than once'
            when commands.identity_taken_before then 'duplicate command with other content'
            when commands.same_command_count > 1 or commands.tran_id_taken_before
                then 'duplicate command'
            when
                commands.new_version is not null
                and (
                    commands.same_new_version_count > 1
                    or commands.new_version_taken_before
                    or commands.root_version <=> commands.new_version
                )
                then 'reused new_version'
            {%- if row_filters %}
                when
                    commands.generation = commands.subscription_generation
                    and {{ qrepl_outside_partition_sql(row_filters, 'commands') }}
                    then 'outside the partition'
            {%- endif %}
        end as own_reject_reason
    from {{ 'partitions_parsed' if row_filters else 'duplicates_counted' }} as commands

),

transactions_checked as (

    select
        commands_checked.*,
        max(own_reject_reason) over (partition by tran_id, subscriber) as any_reject_reason
    from commands_checked

),

final as (

    select
        {{ batch_id }} as batch_id,
        subscriber,
        generation,
        tran_id,
        tran_seq,
        command_seq,
        article,
        op,
        row_key,
        old_version,
        new_version,
        new_row,
        old_row,
        enqueued_at,
        typed_row,
        queue_snapshot_id,
        queue_order,
        root_exists,
        root_version,
        root_row,
        case
            when own_reject_reason is not null then own_reject_reason
            when any_reject_reason is not null then 'transaction has a quarantined command'
        end as reject_reason,
        {{ qrepl_batch_time() }} as batched_at
    from transactions_checked

)

select * from final
