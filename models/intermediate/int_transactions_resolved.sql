{{
    config(
        materialized='incremental',
        incremental_strategy='append',
        full_refresh=false,
        tblproperties={'format-version': '2'},
        post_hook="{{ drop_resolve_views() }}",
    )
}}
-- depends_on: {{ ref('int_transaction_rows') }}
-- depends_on: {{ ref('int_row_roots') }}
{#- One row per valid transaction of the batch: its processing position and whether the
    sequential reader would apply it. Kept per batch so a rerun after a crash finishes the
    batch as it was decided. -#}
{% set publication = qrepl_config() -%}
{%- set batch_id = qrepl_batch_id() -%}
{%- set applied_relation = none -%}
{%- if qrepl_is_running() and publication.policy != 'subscriber_wins' -%}
    {%- set applied_relation = resolve_applied_transactions(
        ref('int_transaction_rows'),
        '(select * from ' ~ ref('int_row_roots') ~ ' where batch_id = ' ~ batch_id ~ ') as batch_row_roots',
        publication.policy, batch_id
    ) -%}
{%- endif %}

with

int_batch_transactions as (

    select * from {{ ref('int_batch_transactions') }}
    where batch_id = {{ batch_id }}

),

applied as (

    {% if applied_relation is not none -%}
        select tran_pos from {{ applied_relation }}
    {%- else -%}
        select cast(null as int) as tran_pos
        where false
    {%- endif %}

),

resolved as (

    select
        int_batch_transactions.batch_id,
        int_batch_transactions.subscriber,
        int_batch_transactions.tran_id,
        int_batch_transactions.tran_pos,
        int_batch_transactions.generation,
        int_batch_transactions.command_count,
        int_batch_transactions.row_count,
        int_batch_transactions.prejudged_outcome,
        '{{ publication.policy }}' as policy,
        {% if publication.policy == 'subscriber_wins' -%}
            int_batch_transactions.prejudged_outcome is null
        {%- else -%}
            int_batch_transactions.prejudged_outcome is null and applied.tran_pos is not null
        {%- endif %} as is_applied
    from int_batch_transactions
    -- applied is read by is_applied (except under subscriber_wins)
    left join applied  -- noqa: ST11
        on int_batch_transactions.tran_pos = applied.tran_pos
    where {{ batch_not_yet_written(batch_id) }}

)

select * from resolved
