from pairedbus_policies import POLICIES
from pulumi_policy import PolicyPack

PolicyPack("pairedbus", POLICIES)
