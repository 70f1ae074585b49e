{% macro qrepl_reader_selected() %}
    {#- Whether this invocation runs any of the queue reader's models (`model.qrepl.*`): only
        then does on-run-start take the run lock and run the publisher's trigger. A downstream
        project's `dbt build --select my_model`, or a build of tests alone, reads what the
        reader wrote and needs neither, so it never waits on a running reader nor stamps. -#}
    {%- for name in selected_resources or [] -%}
        {%- if name.startswith('model.qrepl.') -%}
            {{ return(true) }}
        {%- endif -%}
    {%- endfor -%}
    {{ return(false) }}
{% endmacro %}
