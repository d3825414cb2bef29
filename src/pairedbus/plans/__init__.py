"""The plan as data, without Pulumi: the planned resources (`model`), URNs (`urns`), what the engine
would refuse of the registrations (`engine_checks`), a state export read as a baseline (`state`), the
property diffs (`diff`) and the properties that force a replacement (`replacements`), the changes that
fail the gate (`baseline`), each resource's operation (`operations`) and the tree `pulumi preview` would
show (`tree`). `iac.render` renders a plan under Pulumi's mocks and `policy` gates one; both read this
package, and it imports neither."""
